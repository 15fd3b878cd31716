import PresenceCore
import Synchronization

/// The live board shared between the aggregator, which feeds it, and the HTTP server, which reads
/// it and streams its updates to each open page. A page that falls `backlog` messages behind is cut
/// off (its browser reconnects and starts from a fresh snapshot), so a slow page never grows
/// memory and never slows the aggregator.
public final class LiveFeed: Sendable {
    private struct State {
        var board: LiveBoard
        var pages: [UInt64: AsyncStream<[UInt8]>.Continuation] = [:]
        var nextPage: UInt64 = 0
    }

    private let state: Mutex<State>
    private let backlog: Int

    public init(board: LiveBoard = LiveBoard(), backlog: Int = 1_000) {
        state = Mutex(State(board: board))
        self.backlog = max(1, backlog)
    }

    /// Takes in a record the aggregator decided.
    public func apply(_ record: OutboundRecord, at now: Int64) {
        change(at: now) { $0.apply(record) }
    }

    /// Takes in a registry the aggregator loaded.
    public func replaceRegistry(_ registry: Registry, at now: Int64) {
        change(at: now) { $0.replaceRegistry(registry) }
    }

    /// Takes in the nodes' health.
    public func replaceNodes(_ rows: [NodeRow], at now: Int64) {
        change(at: now) { $0.replaceNodes(rows) }
    }

    /// Reads the board.
    public func read<T>(_ body: (borrowing LiveBoard) -> T) -> T {
        state.withLock { body($0.board) }
    }

    /// How many pages are listening.
    public var pageCount: Int {
        state.withLock { $0.pages.count }
    }

    /// A page's stream: a snapshot first, then every update as a server-sent event. It ends when
    /// the page falls behind or `stopAll` is called; the caller's cancellation ends it too.
    public func stream(at now: Int64) -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingOldest(backlog))
        let id = state.withLock { state -> UInt64 in
            let id = state.nextPage
            state.nextPage += 1
            continuation.yield(ServerSentEvent.snapshot(state.board.snapshotJSON(at: now), cursor: state.board.cursor))
            state.pages[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.pages.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every page's stream (the server is stopping).
    public func stopAll() {
        let pages = state.withLock { state in
            defer { state.pages = [:] }
            return Array(state.pages.values)
        }
        for page in pages { page.finish() }
    }

    private func change(at now: Int64, _ body: (inout LiveBoard) -> [LiveBoard.Update]) {
        let behind = state.withLock { state -> [AsyncStream<[UInt8]>.Continuation] in
            let updates = body(&state.board)
            guard !updates.isEmpty, !state.pages.isEmpty else { return [] }
            let messages = updates.map { ServerSentEvent.message($0, board: state.board, at: now) }
            var behind: [AsyncStream<[UInt8]>.Continuation] = []
            for (id, page) in state.pages {
                for message in messages {
                    if case .dropped = page.yield(message) {
                        state.pages[id] = nil
                        behind.append(page)
                        break
                    }
                }
            }
            return behind
        }
        for page in behind { page.finish() }
    }
}

extension LiveFeed {
    /// Sends every page a comment line, so idle connections stay open and gone pages are found.
    public func keepAlive() {
        let pages = state.withLock { Array($0.pages.values) }
        for page in pages { page.yield(ServerSentEvent.keepAlive) }
    }
}
