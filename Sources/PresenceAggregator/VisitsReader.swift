import Logging
import PresenceHTTP
import PresencePostgres

/// Reads the visits chart's counts for the HTTP page through the client, without waiting for a
/// database that is away (the chart then says so) and with a short statement timeout, so that the
/// page never holds a connection for long.
struct VisitsReader: Sendable {
    let postgres: PostgresClient
    let logger: Logger

    /// Unique visitors per beacon per 30-minute bucket (by arrival, as `presence.visits_30m_v`)
    /// for buckets starting at or after `since` (ms); read from the sessions by their arrival
    /// time, so that an index on it serves the page however long the history.
    func visits(since: Int64) async throws -> [VisitCount] {
        do {
            return try await postgres.withConnection(retrying: false) { connection in
                try await connection.transaction { database in
                    _ = try database.query("SET LOCAL statement_timeout = 5000")
                    return try database.query("""
                        WITH b AS (SELECT date_bin('30 minutes', to_timestamp($1::bigint / 1000.0), TIMESTAMPTZ '2000-01-01 00:00:00+00') AS since)
                        SELECT s.beacon_key,
                               (EXTRACT(EPOCH FROM date_bin('30 minutes', s.entered_at, TIMESTAMPTZ '2000-01-01 00:00:00+00')) * 1000)::bigint,
                               count(DISTINCT s.user_key)
                        FROM presence.sessions s, b
                        WHERE s.entered_at >= b.since AND presence.is_visit(s.entered_at, s.exited_at)
                        GROUP BY 1, 2 ORDER BY 2, 1
                        """, [Int(since)])
                }.rows.map { row in
                    VisitCount(beacon: row.string(0) ?? "", bucket: Int64(try row.int(1) ?? 0), visitors: try row.int(2) ?? 0)
                }
            }
        } catch {
            logger.warning("visits for the page not read", metadata: ["error": "\(error)"])
            throw error
        }
    }
}
