import DequeModule
import PresenceCore
import PresenceMQTT
import Synchronization

/// Everything the decision loop reacts to, in one queue with one reader: messages as the inbound
/// connection receives them (stamped with their arrival, bounded in bytes, what does not fit is
/// dropped and counted), ticks of the clock (at most one waiting), registries loaded beside the
/// loop (only the newest waits), questions about what the core shows (the venue page's, at most
/// `questionLimit` waiting), the shards `ShardOwnership` grants, and the way in going down and
/// coming back. Questions come first, then a waiting registry, then ticks, messages, grants and the
/// way in's changes in the order they came, so that none starves the others.
final class LoopInbox: Sendable {
    enum Item: Sendable {
        case message(MQTTMessage, receivedAt: Int64)
        /// The messages of one read of an inbound connection, received together.
        case messages(MQTTMessageBlock, receivedAt: Int64)
        case tick(Int64)
        case registry(Registry, loadedAt: Int64)
        /// Answered by the loop with its core; with nil when the loop will not answer (stopped).
        case question(@Sendable (AggregatorCore?) -> Void)
        /// Shards granted beside the loop, in order with the messages: the loop's core owns them,
        /// then `taken` hears true (false: the loop had stopped).
        case grant(ShardGrant, taken: CheckedContinuation<Bool, Never>)
        /// The way in (the shards' broker sessions) went down (`up` false) or is back, at `time`,
        /// in order with the messages it delivered.
        case inbound(up: Bool, at: Int64)
    }

    /// What the inbox has dropped and holds.
    struct Counters: Sendable, Equatable {
        var dropped = 0
        var droppedBytes = 0
        var waitingBytes = 0
    }

    private struct State {
        var items = Deque<Item>()
        var questions = Deque<@Sendable (AggregatorCore?) -> Void>()
        var registry: (Registry, Int64)?
        var tickWaiting = false
        var bytes = 0
        var counters = Counters()
        var finished = false
        var reader: CheckedContinuation<Item?, Never>?
    }

    let limit: Int
    let questionLimit: Int
    private let state = Mutex(State())

    init(limit: Int, questionLimit: Int = 64) {
        self.limit = limit
        self.questionLimit = questionLimit
    }

    /// Takes a received message; when it would not fit, drops and counts it, and returns how many
    /// were dropped so far (nil: taken). The one count of inbound drops.
    @discardableResult
    func push(_ message: MQTTMessage, receivedAt: Int64) -> Int? {
        admit(.message(message, receivedAt: receivedAt), cost: message.queuedSize, messages: 1)
    }

    /// Takes the messages of one read of an inbound connection, as one item; when they would not
    /// fit, drops and counts them all, and returns how many were dropped so far (nil: taken).
    @discardableResult
    func push(_ messages: MQTTMessageBlock, receivedAt: Int64) -> Int? {
        guard !messages.isEmpty else { return nil }
        return admit(.messages(messages, receivedAt: receivedAt), cost: messages.queuedSize, messages: messages.count)
    }

    /// Hands `item` (`messages` messages costing `cost` bytes) to a waiting reader, or queues it
    /// when it fits; else drops and counts it.
    private func admit(_ item: Item, cost: Int, messages: Int) -> Int? {
        var dropped: Int?
        let reader = state.withLock { state -> CheckedContinuation<Item?, Never>? in
            guard !state.finished, state.bytes + cost <= limit else {
                state.counters.dropped += messages
                state.counters.droppedBytes += cost
                dropped = state.counters.dropped
                return nil
            }
            if let reader = state.reader {
                state.reader = nil
                return reader
            }
            state.bytes += cost
            state.items.append(item)
            return nil
        }
        reader?.resume(returning: item)
        return dropped
    }

    /// The clock ticked; a tick already waiting stands for this one.
    func tick(at time: Int64) {
        deliver(.tick(time)) { state in
            guard !state.tickWaiting else { return false }
            state.tickWaiting = true
            state.items.append(.tick(time))
            return true
        }
    }

    /// A registry is loaded; it replaces one still waiting.
    func loaded(_ registry: Registry, at time: Int64) {
        deliver(.registry(registry, loadedAt: time)) { state in
            state.registry = (registry, time)
            return true
        }
    }

    /// Asks the loop about its core: `answer` runs on the loop, between two items, with the
    /// core; with nil when the loop has stopped, or too many questions wait.
    func ask(_ answer: @escaping @Sendable (AggregatorCore?) -> Void) {
        var refused = false
        deliver(.question(answer)) { state in
            guard state.questions.count < questionLimit else {
                refused = true
                return false
            }
            state.questions.append(answer)
            return true
        } refused: {
            refused = true
        }
        if refused { answer(nil) }
    }

    /// The way in went down (`up` false) or is back at `time`; never dropped (nothing when finished).
    func inbound(up: Bool, at time: Int64) {
        let item = Item.inbound(up: up, at: time)
        deliver(item) { state in
            state.items.append(item)
            return true
        }
    }

    /// Has the loop's core own `grant`; returns once it does (false: the loop has stopped).
    func grant(_ grant: ShardGrant) async -> Bool {
        await withCheckedContinuation { continuation in
            let item = Item.grant(grant, taken: continuation)
            var refused = false
            deliver(item) { state in
                state.items.append(item)
                return true
            } refused: {
                refused = true
            }
            if refused { continuation.resume(returning: false) }
        }
    }

    /// No more messages will come: `next()` returns what is left, then nil. Ticks, registries and
    /// questions are no longer taken.
    func finish() {
        let reader = state.withLock { state -> CheckedContinuation<Item?, Never>? in
            state.finished = true
            // A reader waits only when nothing does.
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume(returning: nil)
    }

    /// The questions no loop will answer (after the last `next()`), answered with nil, and the
    /// grants it will not take, refused.
    func dropQuestions() {
        let (questions, grants) = state.withLock { state in
            defer {
                state.questions = []
                state.items.removeAll { if case .grant = $0 { true } else { false } }
            }
            return (state.questions, state.items.compactMap { item -> CheckedContinuation<Bool, Never>? in
                if case .grant(_, let taken) = item { taken } else { nil }
            })
        }
        for question in questions { question(nil) }
        for taken in grants { taken.resume(returning: false) }
    }

    /// The next item if one is waiting, taken without suspending; nil when none is. One reader only.
    func nextIfReady() -> Item? {
        state.withLock { Self.take(&$0) }
    }

    /// The next item, waiting for one; nil once finished and empty. One reader only.
    func next() async -> Item? {
        await withCheckedContinuation { continuation in
            let item = state.withLock { state -> Item?? in
                if let next = Self.take(&state) { return .some(next) }
                if state.finished { return .some(nil) }
                state.reader = continuation
                return nil
            }
            if let item { continuation.resume(returning: item) }
        }
    }

    var counters: Counters {
        state.withLock { state in
            var counters = state.counters
            counters.waitingBytes = state.bytes
            return counters
        }
    }

    /// Hands `item` to a waiting reader, or lets `enqueue` keep it (false: not taken); `refused`
    /// runs (outside the lock) when the inbox is finished.
    private func deliver(_ item: Item, enqueue: (inout State) -> Bool, refused: () -> Void = {}) {
        let (reader, finished) = state.withLock { state -> (CheckedContinuation<Item?, Never>?, Bool) in
            guard !state.finished else { return (nil, true) }
            if let reader = state.reader {
                state.reader = nil
                return (reader, false)
            }
            _ = enqueue(&state)
            return (nil, false)
        }
        if finished { refused() }
        reader?.resume(returning: item)
    }

    private static func take(_ state: inout State) -> Item? {
        if let question = state.questions.popFirst() { return .question(question) }
        if let (registry, time) = state.registry {
            state.registry = nil
            return .registry(registry, loadedAt: time)
        }
        guard let item = state.items.popFirst() else { return nil }
        switch item {
        case .message(let message, _): state.bytes -= message.queuedSize
        case .messages(let messages, _): state.bytes -= messages.queuedSize
        case .tick: state.tickWaiting = false
        case .registry, .question, .grant, .inbound: break
        }
        return item
    }
}

extension LoopInbox {
    /// What `body` says of the core, asked on the loop between two items; nil when the loop does
    /// not answer within `limit` (starting, stopping, or too many questions waiting).
    func answer<T: Sendable>(within limit: Duration, _ body: @escaping @Sendable (AggregatorCore) -> T) async -> T? {
        let reply = Reply<T>()
        return await withCheckedContinuation { continuation in
            reply.wait(continuation)
            ask { core in reply.give(core.map(body)) }
            Task {
                try? await Task.sleep(for: limit)
                reply.give(nil)
            }
        }
    }

    /// One answer for one waiter, whichever comes first: the loop's, or none at the time limit.
    private final class Reply<T: Sendable>: Sendable {
        private let waiter = Mutex<CheckedContinuation<T?, Never>?>(nil)

        func wait(_ continuation: CheckedContinuation<T?, Never>) {
            waiter.withLock { $0 = continuation }
        }

        func give(_ value: T?) {
            waiter.withLock { waiting in
                defer { waiting = nil }
                return waiting
            }?.resume(returning: value)
        }
    }
}
