import Synchronization

/// Which journal records the publisher has finished: a record is done once every one of its
/// messages has its acknowledgement (or was set aside); the publisher's cursor is the end of the
/// longest run of done records, so that a record is never skipped.
final class PublishProgress: Sendable {
    private struct State {
        /// Records sent and not done, by start: their end and how many acknowledgements they wait for.
        var open: [UInt64: (end: UInt64, waiting: Int)] = [:]
        var order: [UInt64] = []
        var head = 0
        var done: UInt64
        var outstanding = 0
        var drained: CheckedContinuation<Void, Never>?
    }

    private let state: Mutex<State>
    private let advanced: @Sendable (UInt64) -> Void

    /// Progress from `cursor`; `advanced` hears each new cursor.
    init(from cursor: UInt64, advanced: @escaping @Sendable (UInt64) -> Void) {
        state = Mutex(State(done: cursor))
        self.advanced = advanced
    }

    /// A record from `start` to `end` is being sent, `messages` of them.
    func begin(start: UInt64, end: UInt64, messages: Int) {
        state.withLock { state in
            state.open[start] = (end, messages)
            state.order.append(start)
            state.outstanding += messages
        }
        if messages == 0 { settle() }
    }

    /// One message of the record that starts at `start` is settled (acknowledged or set aside).
    func settled(start: UInt64) {
        state.withLock { state in
            state.open[start]?.waiting -= 1
            state.outstanding -= 1
        }
        settle()
    }

    /// One message of the record that starts at `start` will never be acknowledged (the client
    /// stopped first): the record stays unpublished.
    func abandoned(start: UInt64) {
        state.withLock { $0.outstanding -= 1 }
        settle()
    }

    /// The cursor now.
    var cursor: UInt64 { state.withLock { $0.done } }

    /// Waits until every message sent so far is settled.
    func drained() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                guard state.outstanding > 0 else { return true }
                state.drained = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func settle() {
        let (cursor, waiter) = state.withLock { state -> (UInt64?, CheckedContinuation<Void, Never>?) in
            var moved: UInt64?
            while state.head < state.order.count, let record = state.open[state.order[state.head]], record.waiting <= 0 {
                state.open[state.order[state.head]] = nil
                state.done = record.end
                moved = record.end
                state.head += 1
            }
            if state.head > 1_024, state.head * 2 > state.order.count {
                state.order.removeFirst(state.head)
                state.head = 0
            }
            var waiter: CheckedContinuation<Void, Never>?
            if state.outstanding == 0 {
                waiter = state.drained
                state.drained = nil
            }
            return (moved, waiter)
        }
        if let cursor { advanced(cursor) }
        waiter?.resume()
    }
}
