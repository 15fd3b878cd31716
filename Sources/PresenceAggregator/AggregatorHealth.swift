import PresenceCore
import Synchronization

/// What the aggregator says of itself on its retained status topic, from what its parts report:
/// nothing until its inbound subscriptions are in place (or the database is known to be away),
/// then online, or degraded with the reason while the database is unreachable (events are still
/// decided and published; sessions are stored when it returns).
final class AggregatorHealth: Sendable {
    private struct State {
        var subscribed = false
        var databaseReachable: Bool?
    }

    private let state = Mutex(State())
    /// Wakes whoever publishes the status; a wake-up already waiting stands for later ones.
    let changes: AsyncStream<Void>
    private let changed: AsyncStream<Void>.Continuation

    init() {
        (changes, changed) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func subscribed() {
        update { $0.subscribed = true }
    }

    /// Whether the inbound subscriptions are in place.
    var isSubscribed: Bool {
        state.withLock { $0.subscribed }
    }

    func database(reachable: Bool) {
        update { $0.databaseReachable = reachable }
    }

    /// The status to publish now, if any.
    var status: ServiceStatus? {
        state.withLock { state in
            if state.databaseReachable == false {
                return ServiceStatus(state: .degraded, details: [("reason", "database unreachable")])
            }
            return state.subscribed ? ServiceStatus(state: .online) : nil
        }
    }

    var databaseReachable: Bool {
        state.withLock { $0.databaseReachable ?? false }
    }

    private func update(_ change: (inout State) -> Void) {
        let changedNow = state.withLock { state -> Bool in
            let before = (state.subscribed, state.databaseReachable)
            change(&state)
            return before != (state.subscribed, state.databaseReachable)
        }
        if changedNow { changed.yield() }
    }
}
