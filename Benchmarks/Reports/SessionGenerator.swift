import Foundation
import PresencePostgres

/// Fills `presence.sessions` with `count` synthetic visits in one statement, fast: the table's
/// secondary indexes and unique constraints are dropped first and built again afterwards (in the
/// same transaction, from their own definitions, so the schema is unchanged), then the table is
/// vacuumed and analysed.
///
/// The shapes: users (count / 400, 20 to 25,000) each come on 25 days out of about three months
/// ending yesterday, to one of 5 venues of 60 beacons each (300 beacons), arrive between 08:00 and
/// 10:00 UTC and make 16 visits in a row, popular booths more often; dwell is log-uniform from 5 s
/// to 3 h (median about 4 min, mean about 23 min); half the visits end in a move (the next one
/// begins at the same instant), the others in a timeout and a gap of up to 10 min. A quarter of
/// the users are still at their last beacon (one open session each, never more).
struct SessionGenerator {
    static let visitsPerDay = 16
    static let venues = 5
    static let beaconsPerVenue = 60
    static let stride = 4

    let count: Int

    var users: Int { min(25_000, max(20, count / 400)) }
    /// Days each user comes on.
    var daysPerUser: Int { (count + Self.visitsPerDay * users - 1) / (Self.visitsPerDay * users) }

    /// Seconds each phase took, in order.
    func run(on db: PostgresConnection, report: (String) -> Void) async throws -> [(String, Double)] {
        var phases: [(String, Double)] = []
        try await db.query("SET maintenance_work_mem = '1GB'")
        try await db.query("SET work_mem = '256MB'")
        try await db.query("SET synchronous_commit = off")
        try await db.query("BEGIN")
        let indexes = try await db.query("""
            SELECT i.relname, pg_get_indexdef(i.oid), c.conname, pg_get_constraintdef(c.oid)
            FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
            LEFT JOIN pg_constraint c ON c.conindid = x.indexrelid AND c.conrelid = x.indrelid
            WHERE x.indrelid = 'presence.sessions'::regclass AND NOT x.indisprimary ORDER BY 1
            """).rows
        for index in indexes {
            if let constraint = index.string(2) {
                try await db.query("ALTER TABLE presence.sessions DROP CONSTRAINT \(constraint)")
            } else {
                try await db.query("DROP INDEX presence.\(index.string(0) ?? "")")
            }
        }
        // The months the sessions end in, so that they go to their partitions rather than the default one.
        try await db.query("""
            SELECT presence.add_month_partition('sessions', m) FROM generate_series((now() - INTERVAL '\(daysPerUser * Self.stride + 31) days') AT TIME ZONE 'UTC',
                                                                                  now() AT TIME ZONE 'UTC', INTERVAL '1 month') AS m
            """)
        report("generating \(count) sessions: \(users) users, \(daysPerUser) days each over \(daysPerUser * Self.stride) days, "
            + "\(Self.venues) venues, \(Self.venues * Self.beaconsPerVenue) beacons")
        phases.append(("insert \(count) sessions", try await timed { try await db.query(Self.insert, [count, users]) }))
        for index in indexes {
            let name = index.string(0) ?? ""
            let seconds = try await timed {
                if let constraint = index.string(2), let definition = index.string(3) {
                    try await db.query("ALTER TABLE presence.sessions ADD CONSTRAINT \(constraint) \(definition)")
                } else {
                    // A partitioned index's definition says ON ONLY (the parent alone); built again on every partition.
                    try await db.query((index.string(1) ?? "").replacingOccurrences(of: " ON ONLY ", with: " ON "))
                }
            }
            report("built \(name) in \(String(format: "%.1f", seconds)) s")
            phases.append(("index \(name)", seconds))
        }
        try await db.query("COMMIT")
        phases.append(("vacuum analyze", try await timed { try await db.query("VACUUM ANALYZE presence.sessions") }))
        return phases
    }

    /// $1 sessions, $2 users. Row n is visit n % 16 of user-day n / 16; user-days go user by user,
    /// then day by day, so the table is roughly in time order, as a live one is.
    static let insert = """
        INSERT INTO presence.sessions (user_key, beacon_key, venue_key, device, entered_at, last_seen_at, exited_at, exit_reason,
                                       enter_event, exit_event)
        SELECT 'user-' || u, 'booth-' || venue || '-' || beacon, 'venue-' || venue, 'ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:' || u,
               entered, entered + dwell * INTERVAL '1 second',
               CASE WHEN open THEN NULL ELSE entered + dwell * INTERVAL '1 second' END,
               CASE WHEN open THEN NULL WHEN gap = 0 AND i < \(visitsPerDay - 1) THEN 'moved' ELSE 'timeout' END,
               gen_random_uuid(), CASE WHEN open THEN NULL ELSE gen_random_uuid() END
        FROM (
            SELECT t.*, day_start + (sum(dwell + gap) OVER (PARTITION BY ud ORDER BY i) - dwell - gap) * INTERVAL '1 second' AS entered
            FROM (
                SELECT n / \(visitsPerDay) AS ud, n % \(visitsPerDay) AS i, (n / \(visitsPerDay)) % $2::bigint AS u,
                       ((n / \(visitsPerDay)) % $2::bigint + (n / \(visitsPerDay)) / $2::bigint) % \(venues) AS venue,
                       (floor(\(beaconsPerVenue) * power(random(), 2))::int + (n % \(visitsPerDay)) * 7) % \(beaconsPerVenue) AS beacon,
                       round(exp(ln(5) + random() * ln(10800.0 / 5)))::int AS dwell,
                       CASE WHEN random() < 0.5 THEN 0 ELSE floor(random() * 600)::int END AS gap,
                       date_trunc('day', now()) - (($1::bigint + \(visitsPerDay) * $2::bigint - 1) / (\(visitsPerDay) * $2::bigint)) * \(stride) * INTERVAL '1 day'
                         + (((n / \(visitsPerDay)) / $2::bigint) * \(stride) + ((n / \(visitsPerDay)) % $2::bigint * 7919) % \(stride)) * INTERVAL '1 day'
                         + (480 + ((n / \(visitsPerDay)) % $2::bigint * 104729 + (n / \(visitsPerDay)) / $2::bigint * 7) % 120) * INTERVAL '1 minute' AS day_start,
                       (n % \(visitsPerDay) = \(visitsPerDay - 1) AND (n / \(visitsPerDay)) % $2::bigint % 4 = 0
                        AND n / \(visitsPerDay) + $2::bigint >= ($1::bigint + \(visitsPerDay) - 1) / \(visitsPerDay)) AS open
                FROM generate_series(0, $1::bigint - 1) AS g (n)
            ) t
        ) s
        """
}

/// Seconds `body` took.
func timed(_ body: () async throws -> Void) async throws -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}
