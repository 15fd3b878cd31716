import DequeModule
import Synchronization

/// Work handed from one task to another, in order: producers append without waiting, the one
/// consumer takes what is there in batches and waits when there is nothing. `finish()` says no
/// more will come.
final class WorkQueue<Element: Sendable>: Sendable {
    private struct State {
        var items = Deque<Element>()
        var finished = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    init() {}

    func append(_ element: Element) {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.items.append(element)
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }

    /// No more elements: `wait()` returns false once the queue is empty.
    func finish() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }

    /// Waits until there is something to take (true), or the queue is finished and empty (false).
    func wait() async -> Bool {
        while true {
            if let status = status() { return status }
            await withCheckedContinuation { continuation in
                let waiting = state.withLock { state -> Bool in
                    guard state.items.isEmpty, !state.finished else { return false }
                    state.waiter = continuation
                    return true
                }
                if !waiting { continuation.resume() }
            }
        }
    }

    /// True with elements waiting, false when finished and empty, nil otherwise.
    private func status() -> Bool? {
        state.withLock { state in
            if !state.items.isEmpty { return true }
            return state.finished ? false : nil
        }
    }

    /// Whether nothing waits now.
    var isEmpty: Bool {
        state.withLock { $0.items.isEmpty }
    }

    /// Takes up to `limit` elements, oldest first, without waiting.
    func take(upTo limit: Int) -> [Element] {
        state.withLock { state in
            let count = min(limit, state.items.count)
            defer { state.items.removeFirst(count) }
            return Array(state.items.prefix(count))
        }
    }
}
