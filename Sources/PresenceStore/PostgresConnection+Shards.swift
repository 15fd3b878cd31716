import PresenceCore
import PresencePostgres

/// The advisory lock classes of aggregators sharing a database (see `schemas/sql/v016_shard_owners.sql`).
public enum ShardLocks {
    /// `(members, hashtext(client_id))`: held by every running aggregator.
    public static let members = 7_264_010
    /// `(shards, shard)`: held by the shard's owner.
    public static let shards = 7_264_011
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

    /// The shards below `count` whose lock nobody holds.
    public func freeShards(below count: Int) throws -> Set<Int> {
        Set(try query("""
            SELECT s FROM generate_series(0, $1 - 1) AS s
            WHERE NOT EXISTS (SELECT 1 FROM pg_locks l
                              WHERE l.locktype = 'advisory' AND l.classid = $2::integer::oid AND l.objid = s::oid AND l.objsubid = 2 AND l.granted
                                AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
            """, [count, ShardLocks.shards]).rows.compactMap { try $0.int(0) })
    }

    /// Takes `shard`'s lock for this session, if nobody holds it, and records `clientID` as its
    /// owner since now.
    public func takeShard(_ shard: Int, clientID: String) throws -> Bool {
        guard try query("SELECT pg_try_advisory_lock($1, $2)", [ShardLocks.shards, shard]).rows.first?.bool(0) == true else { return false }
        _ = try query("""
            INSERT INTO presence.shard_owners (shard, client_id, since) VALUES ($1, $2, now())
            ON CONFLICT (shard) DO UPDATE SET client_id = EXCLUDED.client_id, since = EXCLUDED.since
            """, [shard, clientID])
        return true
    }

    /// Gives `shard`'s lock back.
    public func giveBackShard(_ shard: Int) throws {
        _ = try query("SELECT pg_advisory_unlock($1, $2)", [ShardLocks.shards, shard])
    }

    /// Every shard below the venue's count with its owner now (nobody when its lock is free).
    public func shardOwners() throws -> [ShardOwner] {
        try query("""
            SELECT s, o.client_id, (EXTRACT(EPOCH FROM o.since) * 1000)::bigint
            FROM generate_series(0, (SELECT shards FROM presence.settings) - 1) AS s
            LEFT JOIN presence.shard_owners o ON o.shard = s
                AND EXISTS (SELECT 1 FROM pg_locks l
                            WHERE l.locktype = 'advisory' AND l.classid = $1::integer::oid AND l.objid = s::oid AND l.objsubid = 2 AND l.granted
                              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
            ORDER BY s
            """, [ShardLocks.shards]).rows.map { row in
            ShardOwner(shard: try row.int(0) ?? 0, clientID: row.string(1), since: try row.int(2).map(Int64.init))
        }
    }

    /// The venue's shard count.
    public func shardCount() throws -> Shards {
        try query("SELECT shards FROM presence.settings").rows.first?.int(0).flatMap { try? Shards(count: $0) } ?? .one
    }
}
