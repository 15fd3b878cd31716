import Synchronization

/// Counts the acknowledgements of messages sent through the window, and remembers which events
/// the broker accepted: handlers (on libmosquitto's thread) report in, the sender waits for all.
final class Acknowledgements: Sendable {
    private struct State {
        var expected = 0
        var received = 0
        var accepted: [String] = []
        var refused: [(topic: String, reason: Int32)] = []
        var sealed = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    /// One more message was sent.
    func expect() {
        state.withLock { $0.expected += 1 }
    }

    /// A message's outcome: accepted (reason below 0x80), refused, or lost with the connection.
    func received(_ result: Result<Int32, some Error>, topic: String, event: String?) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.received += 1
            if case .success(let reason) = result {
                if reason < 0x80 {
                    if let event { state.accepted.append(event) }
                } else {
                    state.refused.append((topic, reason))
                }
            }
            return Self.done(&state)
        }
        waiter?.resume()
    }

    /// Waits until every message sent so far has its outcome; returns the accepted events and the
    /// refused messages.
    func all() async -> (accepted: [String], refused: [(topic: String, reason: Int32)]) {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                state.sealed = true
                guard state.received < state.expected else { return true }
                state.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
        return state.withLock { ($0.accepted, $0.refused) }
    }

    private static func done(_ state: inout State) -> CheckedContinuation<Void, Never>? {
        guard state.sealed, state.received >= state.expected, let waiter = state.waiter else { return nil }
        state.waiter = nil
        return waiter
    }
}
