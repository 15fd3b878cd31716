import Synchronization

/// Whether other aggregators run on the database now (`ShardOwnership` says so every round). While
/// they do, the publisher publishes a record only once the database holds it: an aggregator that
/// takes over resumes from the database, and must not miss what was published (a second enter).
final class SharingState: Sendable {
    private let shared = Atomic<Bool>(false)

    var isShared: Bool { shared.load(ordering: .relaxed) }

    func set(shared value: Bool) { shared.store(value, ordering: .relaxed) }
}
