/// Some of a venue's shards, as an aggregator owns them: membership is one array read, so that
/// checking every observation costs nothing worth measuring.
public struct ShardSet: Sendable, Equatable, CustomStringConvertible {
    private var member: [Bool]

    /// No shard.
    public static let empty = ShardSet([])

    public init(_ shards: some Sequence<Int>) {
        member = []
        for shard in shards where (0 ..< Shards.maximum).contains(shard) {
            if shard >= member.count { member += Array(repeating: false, count: shard + 1 - member.count) }
            member[shard] = true
        }
    }

    public func contains(_ shard: Int) -> Bool {
        shard >= 0 && shard < member.count && member[shard]
    }

    /// The shards, in order.
    public var sorted: [Int] { member.indices.filter { member[$0] } }

    public var isEmpty: Bool { !member.contains(true) }

    public var count: Int { member.reduce(0) { $0 + ($1 ? 1 : 0) } }

    public func subtracting(_ other: ShardSet) -> ShardSet { ShardSet(sorted.filter { !other.contains($0) }) }

    public static func == (lhs: ShardSet, rhs: ShardSet) -> Bool { lhs.sorted == rhs.sorted }

    /// "0,3,5", or "none".
    public var description: String { isEmpty ? "none" : sorted.map(String.init).joined(separator: ",") }
}
