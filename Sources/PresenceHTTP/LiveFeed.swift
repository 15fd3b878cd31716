import PresenceCore
import Synchronization

/// The open venue pages: each gets the core's page updates as server-sent events, encoded only
/// while some page listens. A page starts from a snapshot its stream is attached with, by whoever
/// reads the core (the decision loop), so that no update falls between the two. A page that falls
/// `backlog` messages behind is cut off (its browser reconnects and starts from a fresh snapshot),
/// so a slow page never grows memory and never slows the aggregator.
public final class LiveFeed: Sendable {
    private struct State {
        var pages: [UInt64: AsyncStream<[UInt8]>.Continuation] = [:]
        var nextPage: UInt64 = 0
    }

    private let state = Mutex(State())
    private let backlog: Int

    public init(backlog: Int = 1_000) {
        self.backlog = max(1, backlog)
    }

    /// How many pages are listening.
    public var pageCount: Int {
        state.withLock { $0.pages.count }
    }

    /// A new page's stream: `snapshot` (the page's JSON, at `cursor`) first, then every update
    /// published after this call. It ends when the page falls behind or `stopAll` is called; the
    /// caller's cancellation ends it too.
    public func attach(snapshot: [UInt8], cursor: Int64) -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingOldest(backlog))
        continuation.yield(ServerSentEvent.snapshot(snapshot, cursor: cursor))
        let id = state.withLock { state -> UInt64 in
            let id = state.nextPage
            state.nextPage += 1
            state.pages[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.pages.removeValue(forKey: id) }
        }
        return stream
    }

    /// Sends every page the core's updates; `snapshot` (the page's JSON and its cursor) stands for
    /// a `.snapshot` update. Nothing is encoded while no page listens.
    public func publish(_ updates: [PageUpdate], snapshot: (json: [UInt8], cursor: Int64)?) {
        guard !updates.isEmpty, pageCount > 0 else { return }
        let messages = updates.compactMap { update -> [UInt8]? in
            if update == .snapshot { return snapshot.map { ServerSentEvent.snapshot($0.json, cursor: $0.cursor) } }
            return ServerSentEvent.message(update)
        }
        let behind = state.withLock { state -> [AsyncStream<[UInt8]>.Continuation] in
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

    /// Ends every page's stream (the server is stopping).
    public func stopAll() {
        let pages = state.withLock { state in
            defer { state.pages = [:] }
            return Array(state.pages.values)
        }
        for page in pages { page.finish() }
    }

    /// Sends every page a comment line, so idle connections stay open and gone pages are found.
    public func keepAlive() {
        let pages = state.withLock { Array($0.pages.values) }
        for page in pages { page.yield(ServerSentEvent.keepAlive) }
    }
}
