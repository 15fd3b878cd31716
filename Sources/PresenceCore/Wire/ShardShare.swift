/// How many of a venue's shards an aggregator should own, and which to take or give back, when
/// `live` aggregators share `count` shards: each owns at most a fair share, the ceiling of
/// `count / live`, so that a newcomer finds shards to take once the others have given their
/// extras back, and the survivors of a crash take everything between them.
public struct ShardShare: Sendable, Equatable {
    /// Shards to give back: those past the count (it shrank), then the highest beyond the share.
    public var give: [Int]
    /// Free shards to try to take, in the order to try them, as many as the share allows.
    public var take: [Int]

    /// The plan for an aggregator holding `held`, given the shards nobody holds (`free`). `start`
    /// rotates the order free shards are tried in (for example a hash of the client id), so that
    /// aggregators starting together try different shards first.
    public init(count: Int, live: Int, held: Set<Int>, free: Set<Int>, start: Int = 0) {
        let count = max(1, count)
        let share = Self.fairShare(count: count, live: live)
        var keep = held.filter { $0 < count }.sorted()
        var give = held.filter { $0 >= count }.sorted()
        if keep.count > share {
            give += keep[share...]
            keep = Array(keep[..<share])
        }
        self.give = give
        let room = share - keep.count
        let offset = ((start % count) + count) % count
        let order = (0 ..< count).map { ($0 + offset) % count }
        take = room > 0 ? Array(order.filter { free.contains($0) && !held.contains($0) }.prefix(room)) : []
    }

    /// The ceiling of `count / live`, at least 1 and at most `count`.
    public static func fairShare(count: Int, live: Int) -> Int {
        let live = max(1, live)
        return min(count, max(1, (count + live - 1) / live))
    }
}
