import PresenceCore
import PresencePostgres

/// The advisory lock classes of aggregators sharing a database (see `schemas/sql/v016_shard_owners.sql`).
public enum ShardLocks {
    /// `(members, hashtext(client_id))`: held by every running aggregator.
    public static let members = 7_264_010
    /// `(shards, key(shard, of: count))`: held by the shard's owner.
    public static let shards = 7_264_011

    /// The lock of `shard` while the venue has `count` shards: the count is part of it, so that a
    /// new count's shards are new locks, free only once every lock of the old count is given back
    /// (whoever takes a shard then reads its users' sessions after their old deciders stored them).
    public static func key(_ shard: Int, of count: Int) -> Int {
        count * Shards.maximum + shard
    }
}

/// A shard's owner as `presencectl shards` shows it.
public struct ShardOwner: Sendable, Equatable {
    public var shard: Int
    /// The aggregator's client id; nil when nobody holds the shard's lock.
    public var clientID: String?
    /// When it took the shard, ms since the epoch.
    public var since: Int64?

    public init(shard: Int, clientID: String?, since: Int64?) {
        self.shard = shard
        self.clientID = clientID
        self.since = since
    }
}

extension PostgresConnection {
    /// Joins the aggregators sharing this database as `clientID`, for as long as this session
    /// lasts; false while another session holds that client id (a second aggregator with it).
    public func joinAggregators(clientID: String) throws -> Bool {
        try query("SELECT pg_try_advisory_lock($1, hashtext($2))", [ShardLocks.members, clientID]).rows.first?.bool(0) ?? false
    }

    /// How many aggregators run on this database now (their sessions hold a member lock).
    public func liveAggregators() throws -> Int {
        try query("""
            SELECT count(*) FROM pg_locks
            WHERE locktype = 'advisory' AND classid = $1::integer::oid AND objsubid = 2 AND granted
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """, [ShardLocks.members]).rows.first?.int(0) ?? 0
    }

    /// The shards of `count` whose lock nobody holds; none while anyone holds a lock of another
    /// count (the venue's count changed and its old shards are not all given back yet).
    public func freeShards(below count: Int) throws -> Set<Int> {
        Set(try query("""
            WITH held AS (SELECT l.objid::bigint AS key FROM pg_locks l
                          WHERE l.locktype = 'advisory' AND l.classid = $2::integer::oid AND l.objsubid = 2 AND l.granted
                            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
            SELECT s FROM generate_series(0, $1 - 1) AS s
            WHERE NOT EXISTS (SELECT 1 FROM held WHERE key = $1 * $3 + s)
              AND NOT EXISTS (SELECT 1 FROM held WHERE key / $3 <> $1)
            """, [count, ShardLocks.shards, Shards.maximum]).rows.compactMap { try $0.int(0) })
    }

    /// Takes the lock of `shard` of `count` for this session, if nobody holds it, and records
    /// `clientID` as its owner since now.
    public func takeShard(_ shard: Int, of count: Int, clientID: String) throws -> Bool {
        guard try query("SELECT pg_try_advisory_lock($1, $2)", [ShardLocks.shards, ShardLocks.key(shard, of: count)]).rows.first?.bool(0) == true else {
            return false
        }
        _ = try query("""
            INSERT INTO presence.shard_owners (shard, client_id, since) VALUES ($1, $2, now())
            ON CONFLICT (shard) DO UPDATE SET client_id = EXCLUDED.client_id, since = EXCLUDED.since
            """, [shard, clientID])
        return true
    }

    /// Gives the lock of `shard` of `count` back.
    public func giveBackShard(_ shard: Int, of count: Int) throws {
        _ = try query("SELECT pg_advisory_unlock($1, $2)", [ShardLocks.shards, ShardLocks.key(shard, of: count)])
    }

    /// Every shard below the venue's count with its owner now (nobody when its lock is free).
    public func shardOwners() throws -> [ShardOwner] {
        try query("""
            WITH venue AS (SELECT shards FROM presence.settings)
            SELECT s, o.client_id, (EXTRACT(EPOCH FROM o.since) * 1000)::bigint
            FROM venue CROSS JOIN generate_series(0, venue.shards - 1) AS s
            LEFT JOIN presence.shard_owners o ON o.shard = s
                AND EXISTS (SELECT 1 FROM pg_locks l
                            WHERE l.locktype = 'advisory' AND l.classid = $1::integer::oid AND l.objid::bigint = venue.shards * $2 + s
                              AND l.objsubid = 2 AND l.granted
                              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
            ORDER BY s
            """, [ShardLocks.shards, Shards.maximum]).rows.map { row in
            ShardOwner(shard: try row.int(0) ?? 0, clientID: row.string(1), since: try row.int(2).map(Int64.init))
        }
    }

    /// The venue's shard count.
    public func shardCount() throws -> Shards {
        try query("SELECT shards FROM presence.settings").rows.first?.int(0).flatMap { try? Shards(count: $0) } ?? .one
    }
}
