import DequeModule
import PresenceCore
import PresenceMQTT
import Synchronization

/// Everything the decision loop reacts to, in one queue with one reader: messages as the inbound
/// connection receives them (stamped with their arrival, bounded in bytes, what does not fit is
/// dropped and counted), ticks of the clock (at most one waiting) and registries loaded beside the
/// loop (only the newest waits). A waiting registry comes first, then ticks and messages in the
/// order they came, so that neither starves the other.
final class LoopInbox: Sendable {
    enum Item: Sendable {
        case message(MQTTMessage, receivedAt: Int64)
        case tick(Int64)
        case registry(Registry, loadedAt: Int64)
    }

    /// What the inbox has dropped and holds.
    struct Counters: Sendable, Equatable {
        var dropped = 0
        var droppedBytes = 0
        var waitingBytes = 0
    }

    private struct State {
        var items = Deque<Item>()
        var registry: (Registry, Int64)?
        var tickWaiting = false
        var bytes = 0
        var counters = Counters()
        var finished = false
        var reader: CheckedContinuation<Item?, Never>?
    }

    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// Takes a received message; false (and counted) when it would not fit.
    func push(_ message: MQTTMessage, receivedAt: Int64) -> Bool {
        let cost = message.queuedSize
        let reader = state.withLock { state -> CheckedContinuation<Item?, Never>?? in
            guard !state.finished, state.bytes + cost <= limit else {
                state.counters.dropped += 1
                state.counters.droppedBytes += cost
                return nil
            }
            if let reader = state.reader {
                state.reader = nil
                return .some(reader)
            }
            state.bytes += cost
            state.items.append(.message(message, receivedAt: receivedAt))
            return .some(nil)
        }
        switch reader {
        case nil: return false
        case .some(nil): return true
        case .some(let waiting?):
            waiting.resume(returning: .message(message, receivedAt: receivedAt))
            return true
        }
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

    /// No more messages will come: `next()` returns what is left, then nil. Ticks and registries
    /// are no longer taken.
    func finish() {
        let reader = state.withLock { state -> CheckedContinuation<Item?, Never>? in
            state.finished = true
            // A reader waits only when nothing does.
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume(returning: nil)
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

    /// Hands `item` to a waiting reader, or lets `enqueue` keep it (false: not taken).
    private func deliver(_ item: Item, enqueue: (inout State) -> Bool) {
        let reader = state.withLock { state -> CheckedContinuation<Item?, Never>? in
            guard !state.finished else { return nil }
            if let reader = state.reader {
                state.reader = nil
                return reader
            }
            _ = enqueue(&state)
            return nil
        }
        reader?.resume(returning: item)
    }

    private static func take(_ state: inout State) -> Item? {
        if let (registry, time) = state.registry {
            state.registry = nil
            return .registry(registry, loadedAt: time)
        }
        guard let item = state.items.popFirst() else { return nil }
        switch item {
        case .message(let message, _): state.bytes -= message.queuedSize
        case .tick: state.tickWaiting = false
        case .registry: break
        }
        return item
    }
}
