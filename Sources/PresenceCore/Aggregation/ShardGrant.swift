/// What an aggregator decides for from now on, as `ShardOwnershipMachine` grants it to the core
/// (`AggregatorCore.own(_:at:)`, or the first at its making): the shards, the open sessions and
/// zone stays the database held once the shards just taken were locked (their users resume from
/// them), and whether other aggregators run on the database, which makes the core's records wait
/// to be stored before they are published.
public struct ShardGrant: Sendable, Equatable {
    public var shards: ShardSet
    public var sessions: [Presence]
    public var zoneSessions: [ZoneSession]
    /// Whether other aggregators share the venue now.
    public var shared: Bool

    public init(shards: ShardSet, sessions: [Presence] = [], zoneSessions: [ZoneSession] = [], shared: Bool = false) {
        self.shards = shards
        self.sessions = sessions
        self.zoneSessions = zoneSessions
        self.shared = shared
    }
}
