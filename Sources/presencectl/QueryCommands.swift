import ArgumentParser
import PresenceCLI
import PresenceDatabaseCLI
import PresenceCore
import PresencePostgres

struct PresenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "presence", abstract: "Who is at which beacon now, or in a zone (--zone).")
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Only this venue.") var venue: String?
    @Option(help: "Who is in this zone now (at any beacon inside it), and at which beacon.") var zone: String?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let venue = try venue.map { try Slug($0, what: "venue").value }
        if let zone { return try await inZone(try Slug(zone, what: "zone").value, venue: venue) }
        let rows = try await withDatabase(connection) { db in
            try await db.query("""
                SELECT user_key, beacon_key, venue_key, (EXTRACT(EPOCH FROM since) * 1000)::bigint, device,
                       (EXTRACT(EPOCH FROM last_seen_at) * 1000)::bigint
                FROM presence.current_v WHERE $1::text IS NULL OR venue_key = $1 ORDER BY beacon_key, user_key
                """, [venue]).rows
        }
        var fields = FieldRows(["user", "beacon", "venue", "since", "device", "last_seen"])
        for row in rows {
            fields.append([row.text(0), row.text(1), row.text(2), try row.time(3), row.text(4), try row.time(5)])
        }
        try fields.print(output.format) {
            TableOutput.render(header: ["USER", "BEACON", "VENUE", "SINCE", "DEVICE"], rows: try rows.map { row in
                [row.string(0) ?? "", row.string(1) ?? "", row.string(2) ?? "-", Timestamps.iso8601(Int64(try row.int(3) ?? 0)), row.string(4) ?? ""]
            })
        }
    }

    /// Who is in `zone`, since when, and at which beacon now.
    private func inZone(_ zone: String, venue: String?) async throws {
        let rows = try await withDatabase(connection) { db in
            try await db.query("""
                SELECT z.user_key, z.zone_key, z.venue_key, (EXTRACT(EPOCH FROM z.since) * 1000)::bigint, c.beacon_key
                FROM presence.zone_present_v z LEFT JOIN presence.current_v c ON c.user_key = z.user_key
                WHERE z.zone_key = $1 AND ($2::text IS NULL OR z.venue_key = $2) ORDER BY z.since, z.user_key
                """, [zone, venue]).rows
        }
        var fields = FieldRows(["user", "zone", "venue", "since", "beacon"])
        for row in rows {
            fields.append([row.text(0), row.text(1), row.text(2), try row.time(3), row.text(4)])
        }
        try fields.print(output.format) {
            TableOutput.render(header: ["USER", "ZONE", "SINCE", "BEACON"], rows: try rows.map { row in
                [row.string(0) ?? "", row.string(1) ?? "", Timestamps.iso8601(Int64(try row.int(3) ?? 0)), row.string(4) ?? "-"]
            })
        }
    }
}

struct SessionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sessions",
                                                    abstract: "Visits: who was at which beacon (or in which zone, with --zone), from when to when.")
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Only this user.") var user: String?
    @Option(help: "Only this beacon.") var beacon: String?
    @Option(help: "Stays in this zone instead of beacon visits.") var zone: String?
    @Option(help: "Only sessions that entered within this long ago, such as 1h or 7d.") var since: String?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let user = try user.map { try Slug($0, what: "user").value }
        let beacon = try beacon.map { try Slug($0, what: "beacon").value }
        let zone = try zone.map { try Slug($0, what: "zone").value }
        if beacon != nil, zone != nil { throw ValueError("--beacon and --zone cannot be given together: beacon visits or zone stays, not both") }
        let window = try since.map { Int(try DurationText.milliseconds($0, what: "--since")) }
        // Zone stays come from their table (the view analysts read has no device), beacon visits from sessions_v.
        let (source, place) = zone == nil ? ("presence.sessions_v", "beacon_key")
            : ("(SELECT *, EXTRACT(EPOCH FROM (COALESCE(exited_at, now()) - entered_at))::double precision AS dwell_seconds FROM presence.zone_sessions) z", "zone_key")
        let rows = try await withDatabase(connection) { db in
            try await db.query("""
                SELECT user_key, \(place), venue_key, device, (EXTRACT(EPOCH FROM entered_at) * 1000)::bigint,
                       (EXTRACT(EPOCH FROM exited_at) * 1000)::bigint, exit_reason, dwell_seconds
                FROM \(source)
                WHERE ($1::text IS NULL OR user_key = $1) AND ($2::text IS NULL OR \(place) = $2)
                  AND ($3::bigint IS NULL OR entered_at >= now() - $3::bigint * INTERVAL '1 millisecond')
                ORDER BY entered_at, user_key
                """, [user, zone ?? beacon, window]).rows
        }
        var fields = FieldRows(["user", zone == nil ? "beacon" : "zone", "venue", "device", "entered", "exited", "reason", "dwell"])
        for row in rows {
            fields.append([row.text(0), row.text(1), row.text(2), row.text(3), try row.time(4), try row.time(5) ?? .null,
                           row.text(6) ?? .null, try row.number(7)])
        }
        try fields.print(output.format) {
            TableOutput.render(header: ["USER", zone == nil ? "BEACON" : "ZONE", "ENTERED", "EXITED", "REASON", "DWELL"], rows: try rows.map { row in
                [row.string(0) ?? "", row.string(1) ?? "", Timestamps.iso8601(Int64(try row.int(4) ?? 0)),
                 try row.int(5).map { Timestamps.iso8601(Int64($0)) } ?? "-", row.string(6) ?? "-",
                 try row.double(7).map { DurationText.format(Int64($0 * 1000)) } ?? ""]
            })
        }
    }
}

struct VisitsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "visits",
        abstract: "Unique visitors per beacon (or zone, with --zone) per time bucket.",
        discussion: """
            A visit counts in the bucket it began in (as presence.visits_30m_v), once it has lasted the venue's visit minimum \
            (presence.settings.visit_min_dwell: 0 until the venue sets it; 15 s leaves walks past a booth out); with --present, \
            everyone present counts in every bucket they overlap (as presence.occupancy_30m_v). --chart writes them as bar charts, one per beacon, times in UTC: SVG, or PNG when \
            FILE ends in .png (through rsvg-convert, from Debian's librsvg2-bin); then rows are printed only with --json or --csv. \
            --zone counts the stays in one zone (as presence.zone_visits_30m_v) instead of the beacons' visits.
            """)
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Bucket length, such as 30m or 1h (aligned to 2000-01-01 UTC).") var bucket = "30m"
    @Option(help: "Only buckets that start within this long ago, such as 1d.") var since: String?
    @Flag(help: "Count everyone present during a bucket, not only those who arrived in it.") var present = false
    @Option(help: "Only visits at this venue.") var venue: String?
    @Option(help: "Count the stays in this zone instead of the beacons' visits.") var zone: String?
    @Option(help: "Also draw the counts as bar charts into FILE (.svg or .png).") var chart: String?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let bucket = try DurationText.milliseconds(bucket, what: "--bucket")
        guard bucket >= 60_000 else { throw ValueError("--bucket \(DurationText.format(bucket)) is not valid: expected 1m or more") }
        let window = try since.map { Int(try DurationText.milliseconds($0, what: "--since")) }
        let venue = try venue.map { try Slug($0, what: "venue").value }
        let zone = try zone.map { try Slug($0, what: "zone").value }
        let (table, place) = zone == nil ? ("presence.sessions", "beacon_key") : ("presence.zone_sessions", "zone_key")
        let chartKind = try chart.map { try ChartFile.kind(of: $0) }
        // The bucket filter is exact; the range conditions before it only let the indexes find
        // the visits that can reach a bucket so recent (the start of a counted visit, the end of a
        // present one, lies at or after the first bucket's start).
        let rows = try await withDatabase(connection) { db in
            try await db.query("""
                WITH b AS (SELECT $1::bigint * INTERVAL '1 millisecond' AS width,
                                  now() - $2::bigint * INTERVAL '1 millisecond' AS since)
                SELECT s.\(place), (EXTRACT(EPOCH FROM g.bucket_start) * 1000)::bigint, count(DISTINCT s.user_key)
                FROM \(table) s, b
                CROSS JOIN LATERAL generate_series(
                    date_bin(b.width, s.entered_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'),
                    date_bin(b.width, CASE WHEN $3::boolean THEN COALESCE(s.exited_at, now()) ELSE s.entered_at END,
                             TIMESTAMPTZ '2000-01-01 00:00:00+00'),
                    b.width) AS g (bucket_start)
                WHERE ($4::text IS NULL OR s.venue_key = $4) AND ($5::text IS NULL OR s.\(place) = $5)
                  AND ($3::boolean OR presence.is_visit(s.entered_at, s.exited_at))
                  AND ($2::bigint IS NULL
                   OR (g.bucket_start >= b.since
                       AND CASE WHEN $3::boolean
                                THEN tstzrange(s.entered_at, s.exited_at, '[)') && tstzrange(b.since - INTERVAL '1 microsecond', NULL)
                                ELSE s.entered_at >= b.since END))
                GROUP BY 1, 2 ORDER BY 2, 1
                """, [Int(bucket), window, present, venue, zone]).rows
        }
        let bars = try rows.map { row in
            VisitsChart.Bar(beacon: row.string(0) ?? "", bucket: Int64(try row.int(1) ?? 0), count: try row.int(2) ?? 0)
        }
        if let chart, let chartKind {
            let counted = present ? "everyone present in a bucket counts in it" : "a visit counts in the bucket it began in"
            let svg = VisitsChart.svg(bars: bars, width: bucket, title: "Unique visitors per \(zone == nil ? "beacon" : "zone") per \(DurationText.format(bucket)) (UTC)",
                                      subtitle: "\(Self.span(of: bars, width: bucket)) · \(counted) · all bars share one scale")
            try ChartFile.write(svg, to: chart, as: chartKind)
            StandardStreams.error("wrote the chart of \(Set(bars.map(\.beacon)).count) \(zone == nil ? "beacons" : "zones") to \(chart)")
            guard output.format != .table else { return }
        }
        var fields = FieldRows([zone == nil ? "beacon" : "zone", "bucket_start", "unique_users"])
        for bar in bars {
            fields.append([.text(bar.beacon), .time(bar.bucket), .integer(Int64(bar.count))])
        }
        try fields.print(output.format) {
            TableOutput.render(header: ["BUCKET", zone == nil ? "BEACON" : "ZONE", "UNIQUE USERS"], rows: bars.map { bar in
                [Timestamps.iso8601(bar.bucket), bar.beacon, String(bar.count)]
            })
        }
    }

    /// "2026-11-22 10:00 to 12:30 UTC": the time the buckets cover.
    static func span(of bars: [VisitsChart.Bar], width: Int64) -> String {
        guard let first = bars.map(\.bucket).min(), let last = bars.map(\.bucket).max() else { return "no visits" }
        let start = Timestamps.iso8601(first), end = Timestamps.iso8601(last + width)
        let endText = start.prefix(10) == end.prefix(10) ? String(end.dropFirst(11).prefix(5)) : "\(end.prefix(10)) \(end.dropFirst(11).prefix(5))"
        return "\(start.prefix(10)) \(start.dropFirst(11).prefix(5)) to \(endText) UTC"
    }
}
