import Logging
import PresenceHTTP
import PresencePostgres

/// Reads the visits chart's counts for the HTTP page over a connection of its own, opened when
/// first asked and again after a failure, so that the page never waits on the decision loop's
/// or the writer's connection, and a database outage only makes the chart say so.
actor VisitsReader {
    private let configuration: PostgresConfiguration
    private let logger: Logger
    private var connection: PostgresConnection?

    init(configuration: PostgresConfiguration, logger: Logger) {
        var configuration = configuration
        configuration.statementTimeout = 5_000
        self.configuration = configuration
        self.logger = logger
    }

    /// Unique visitors per beacon per 30-minute bucket (by arrival, as `presence.visits_30m_v`)
    /// for buckets starting at or after `since` (ms); read from the sessions by their arrival
    /// time, so that an index on it serves the page however long the history.
    func visits(since: Int64) async throws -> [VisitCount] {
        let connection = try await open()
        do {
            let result = try await connection.query("""
                WITH b AS (SELECT date_bin('30 minutes', to_timestamp($1::bigint / 1000.0), TIMESTAMPTZ '2000-01-01 00:00:00+00') AS since)
                SELECT s.beacon_key,
                       (EXTRACT(EPOCH FROM date_bin('30 minutes', s.entered_at, TIMESTAMPTZ '2000-01-01 00:00:00+00')) * 1000)::bigint,
                       count(DISTINCT s.user_key)
                FROM presence.sessions s, b
                WHERE s.entered_at >= b.since
                GROUP BY 1, 2 ORDER BY 2, 1
                """, [Int(since)])
            return try result.rows.map { row in
                VisitCount(beacon: row.string(0) ?? "", bucket: Int64(try row.int(1) ?? 0), visitors: try row.int(2) ?? 0)
            }
        } catch {
            self.connection = nil
            await connection.close()
            logger.warning("visits for the page not read", metadata: ["error": "\(error)"])
            throw error
        }
    }

    func close() async {
        await connection?.close()
        connection = nil
    }

    private func open() async throws -> PostgresConnection {
        if let connection, await connection.isOpen { return connection }
        let opened = try await PostgresConnection.connect(configuration, logger: logger)
        connection = opened
        return opened
    }
}
