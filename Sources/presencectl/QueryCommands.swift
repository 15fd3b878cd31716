import ArgumentParser
import PresenceCLI
import PresenceDatabaseCLI
import PresenceCore
import PresencePostgres

struct PresenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "presence", abstract: "Who is at which beacon now.")
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Only this venue.") var venue: String?
    @Flag(help: "One JSON object per line.") var json = false

    func run() async throws {
        let venue = try venue.map { try Slug($0, what: "venue").value }
        let rows = try await withDatabase(connection) { db in
            try await db.query("""
                SELECT user_key, beacon_key, venue_key, (EXTRACT(EPOCH FROM since) * 1000)::bigint, device,
                       (EXTRACT(EPOCH FROM last_seen_at) * 1000)::bigint
                FROM presence.current_v WHERE $1::text IS NULL OR venue_key = $1 ORDER BY beacon_key, user_key
                """, [venue]).rows
        }
        if json {
            for row in rows {
                var w = JSONWriter()
                w.object { w in
                    w.member("user", row.string(0))
                    w.member("beacon", row.string(1))
                    w.member("venue", row.string(2))
                    w.member("since", try? row.int(3))
                    w.member("device", row.string(4))
                    w.member("last_seen", try? row.int(5))
                }
                print(String(decoding: w.bytes, as: UTF8.self))
            }
        } else {
            print(TableOutput.render(header: ["USER", "BEACON", "VENUE", "SINCE", "DEVICE"], rows: try rows.map { row in
                [row.string(0) ?? "", row.string(1) ?? "", row.string(2) ?? "-", Timestamps.iso8601(Int64(try row.int(3) ?? 0)), row.string(4) ?? ""]
            }))
        }
    }
}

struct SessionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sessions", abstract: "Visits: who was at which beacon, from when to when.")
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Only this user.") var user: String?
    @Option(help: "Only this beacon.") var beacon: String?
    @Option(help: "Only sessions that entered within this long ago, such as 1h or 7d.") var since: String?
    @Flag(help: "One JSON object per line.") var json = false

    func run() async throws {
        let user = try user.map { try Slug($0, what: "user").value }
        let beacon = try beacon.map { try Slug($0, what: "beacon").value }
        let window = try since.map { Int(try DurationText.milliseconds($0, what: "--since")) }
        let rows = try await withDatabase(connection) { db in
            try await db.query("""
                SELECT user_key, beacon_key, venue_key, device, (EXTRACT(EPOCH FROM entered_at) * 1000)::bigint,
                       (EXTRACT(EPOCH FROM exited_at) * 1000)::bigint, exit_reason, dwell_seconds
                FROM presence.sessions_v
                WHERE ($1::text IS NULL OR user_key = $1) AND ($2::text IS NULL OR beacon_key = $2)
                  AND ($3::bigint IS NULL OR entered_at >= now() - $3::bigint * INTERVAL '1 millisecond')
                ORDER BY entered_at, user_key
                """, [user, beacon, window]).rows
        }
        if json {
            for row in rows {
                var w = JSONWriter()
                w.object { w in
                    w.member("user", row.string(0))
                    w.member("beacon", row.string(1))
                    w.member("venue", row.string(2))
                    w.member("device", row.string(3))
                    w.member("entered", try? row.int(4))
                    w.key("exited")
                    if let exited = try? row.int(5) { w.int(exited) } else { w.null() }
                    w.key("reason")
                    if let reason = row.string(6) { w.string(reason) } else { w.null() }
                    w.member("dwell", number: try? row.double(7))
                }
                print(String(decoding: w.bytes, as: UTF8.self))
            }
        } else {
            print(TableOutput.render(header: ["USER", "BEACON", "ENTERED", "EXITED", "REASON", "DWELL"], rows: try rows.map { row in
                [row.string(0) ?? "", row.string(1) ?? "", Timestamps.iso8601(Int64(try row.int(4) ?? 0)),
                 try row.int(5).map { Timestamps.iso8601(Int64($0)) } ?? "-", row.string(6) ?? "-",
                 try row.double(7).map { DurationText.format(Int64($0 * 1000)) } ?? ""]
            }))
        }
    }
}

struct VisitsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "visits",
        abstract: "Unique visitors per beacon per time bucket.",
        discussion: "A visit counts in the bucket it began in (as presence.visits_30m_v); with --present, in every bucket it overlaps (as presence.occupancy_30m_v).")
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Bucket length, such as 30m or 1h (aligned to 2000-01-01 UTC).") var bucket = "30m"
    @Option(help: "Only buckets that start within this long ago, such as 1d.") var since: String?
    @Flag(help: "Count everyone present during a bucket, not only those who arrived in it.") var present = false
    @Flag(help: "One JSON object per line.") var json = false

    func run() async throws {
        let bucket = try DurationText.milliseconds(bucket, what: "--bucket")
        guard bucket >= 60_000 else { throw ValueError("--bucket \(DurationText.format(bucket)) is not valid: expected 1m or more") }
        let window = try since.map { Int(try DurationText.milliseconds($0, what: "--since")) }
        let rows = try await withDatabase(connection) { db in
            try await db.query("""
                WITH b AS (SELECT $1::bigint * INTERVAL '1 millisecond' AS width)
                SELECT s.beacon_key, (EXTRACT(EPOCH FROM g.bucket_start) * 1000)::bigint, count(DISTINCT s.user_key)
                FROM presence.sessions s, b
                CROSS JOIN LATERAL generate_series(
                    date_bin(b.width, s.entered_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'),
                    date_bin(b.width, CASE WHEN $3::boolean THEN COALESCE(s.exited_at, now()) ELSE s.entered_at END,
                             TIMESTAMPTZ '2000-01-01 00:00:00+00'),
                    b.width) AS g (bucket_start)
                WHERE $2::bigint IS NULL OR g.bucket_start >= now() - $2::bigint * INTERVAL '1 millisecond'
                GROUP BY 1, 2 ORDER BY 2, 1
                """, [Int(bucket), window, present]).rows
        }
        if json {
            for row in rows {
                var w = JSONWriter()
                w.object { w in
                    w.member("beacon", row.string(0))
                    w.member("bucket_start", try? row.int(1))
                    w.member("unique_users", try? row.int(2))
                }
                print(String(decoding: w.bytes, as: UTF8.self))
            }
        } else {
            print(TableOutput.render(header: ["BUCKET", "BEACON", "UNIQUE USERS"], rows: try rows.map { row in
                [Timestamps.iso8601(Int64(try row.int(1) ?? 0)), row.string(0) ?? "", String(try row.int(2) ?? 0)]
            }))
        }
    }
}
