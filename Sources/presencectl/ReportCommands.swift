import ArgumentParser
import PresenceCLI
import PresenceCore
import PresenceDatabaseCLI
import PresencePostgres

struct DwellReport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dwell",
        abstract: "Dwell per beacon: visits, visitors, median, 90th percentile and mean dwell (presence.dwell).",
        discussion: "Closed visits only: an open visit's dwell is not known yet. Percentiles interpolate (percentile_cont).")
    @OptionGroup var options: BeaconReportOptions

    func run() async throws {
        let rows = try await options.rows("beacon_key, venue_key, visits, visitors, median_dwell_seconds, p90_dwell_seconds, mean_dwell_seconds",
                                          of: "dwell", orderedBy: "visits DESC, beacon_key")
        var fields = FieldRows(["beacon", "venue", "visits", "visitors", "median_dwell", "p90_dwell", "mean_dwell"])
        for row in rows {
            fields.append([row.text(0), row.text(1), try row.integer(2), try row.integer(3), try row.number(4), try row.number(5), try row.number(6)])
        }
        try fields.print(options.output.format) {
            TableOutput.render(header: ["BEACON", "VENUE", "VISITS", "VISITORS", "MEDIAN", "P90", "MEAN"], rows: try rows.map { row in
                [row.string(0) ?? "", row.string(1) ?? "-", row.string(2) ?? "", row.string(3) ?? "",
                 ElapsedText.format(seconds: try row.double(4) ?? .nan), ElapsedText.format(seconds: try row.double(5) ?? .nan),
                 ElapsedText.format(seconds: try row.double(6) ?? .nan)]
            })
        }
    }
}

struct HourlyReport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hourly",
        abstract: "Visits and unique users per beacon per hour (presence.visits_hourly).",
        discussion: "A visit, open or closed, counts in the UTC hour it began.")
    @OptionGroup var options: BeaconReportOptions

    func run() async throws {
        let rows = try await options.rows("beacon_key, venue_key, \(epochMilliseconds("hour")), visits, unique_users",
                                          of: "visits_hourly", orderedBy: "hour, beacon_key")
        var fields = FieldRows(["beacon", "venue", "hour", "visits", "unique_users"])
        for row in rows {
            fields.append([row.text(0), row.text(1), try row.time(2), try row.integer(3), try row.integer(4)])
        }
        try fields.print(options.output.format) {
            TableOutput.render(header: ["HOUR", "BEACON", "VENUE", "VISITS", "UNIQUE USERS"], rows: try rows.map { row in
                [Timestamps.iso8601(Int64(try row.int(2) ?? 0)), row.string(0) ?? "", row.string(1) ?? "-", row.string(3) ?? "", row.string(4) ?? ""]
            })
        }
    }
}

struct DailyReport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daily",
        abstract: "Visits and unique users per beacon per day (presence.visits_daily).",
        discussion: "A visit, open or closed, counts in the UTC day it began.")
    @OptionGroup var options: BeaconReportOptions

    func run() async throws {
        let rows = try await options.rows("beacon_key, venue_key, day::text, visits, unique_users", of: "visits_daily", orderedBy: "day, beacon_key")
        var fields = FieldRows(["beacon", "venue", "day", "visits", "unique_users"])
        for row in rows {
            fields.append([row.text(0), row.text(1), row.text(2), try row.integer(3), try row.integer(4)])
        }
        try fields.print(options.output.format) {
            TableOutput.render(header: ["DAY", "BEACON", "VENUE", "VISITS", "UNIQUE USERS"], rows: rows.map { row in
                [row.string(2) ?? "", row.string(0) ?? "", row.string(1) ?? "-", row.string(3) ?? "", row.string(4) ?? ""]
            })
        }
    }
}

struct WhereReport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "where",
        abstract: "Who was where at a given time (presence.who_was_where).",
        discussion: """
            The visits under way at --at: entered at or before it, exited after it. At a move's instant a user is at the new \
            beacon. An open visit lasts as far as asked: a time after now shows who is there now.
            """)
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "The time, such as 2026-11-22T10:30:00Z (UTC unless an offset is given).") var at: String
    @OptionGroup var place: PlaceFilter
    @Option(help: "Only this user.") var user: String?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let at = try TimeText.milliseconds(at, what: "--at")
        let user = try user.map { try Slug($0, what: "user").value }
        let parameters: [PostgresParameter] = [Timestamps.iso8601(at)] + (try place.parameters()) + [user]
        let rows = try await withDatabase(connection) { db in
            try await db.query("""
                SELECT user_key, beacon_key, venue_key, \(epochMilliseconds("entered_at")), \(epochMilliseconds("exited_at"))
                FROM presence.who_was_where($1::timestamptz)
                WHERE ($2::text IS NULL OR venue_key = $2) AND ($3::text IS NULL OR beacon_key = $3) AND ($4::text IS NULL OR user_key = $4)
                ORDER BY beacon_key, user_key
                """, parameters).rows
        }
        var fields = FieldRows(["user", "beacon", "venue", "entered", "exited"])
        for row in rows {
            fields.append([row.text(0), row.text(1), row.text(2), try row.time(3), try row.time(4) ?? .null])
        }
        try fields.print(output.format) {
            TableOutput.render(header: ["USER", "BEACON", "VENUE", "ENTERED", "EXITED"], rows: try rows.map { row in
                [row.string(0) ?? "", row.string(1) ?? "", row.string(2) ?? "-", Timestamps.iso8601(Int64(try row.int(3) ?? 0)),
                 try row.int(4).map { Timestamps.iso8601(Int64($0)) } ?? "-"]
            })
        }
    }
}

struct PathsReport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "paths",
        abstract: "Each user's path through the beacons per day (presence.user_paths).",
        discussion: """
            The visits that began on a UTC day, in the order they began, each with its times. JSON: one object per path with \
            its steps; CSV: one record per step.
            """)
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Only this user.") var user: String?
    @Option(help: "Only this UTC day, such as 2026-11-22.") var day: String?
    @OptionGroup var range: ReportRange
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let user = try user.map { try Slug($0, what: "user").value }
        var parameters = try range.parameters()
        if let day {
            guard !range.isGiven else { throw ValueError("--day '\(day)' cannot be used with --since, --from or --to: give one") }
            let start = try TimeText.day(day, what: "--day")
            parameters = [Timestamps.iso8601(start), nil, Timestamps.iso8601(start + 86_400_000)]
        }
        let rows = try await withDatabase(connection) { db in
            try await db.query("""
                SELECT p.user_key, p.day::text, s.beacon, \(epochMilliseconds("s.entered")), \(epochMilliseconds("s.exited"))
                FROM presence.user_paths(\(ReportRange.startSQL), \(ReportRange.endSQL)) p
                CROSS JOIN LATERAL unnest(p.path, p.entered_at, p.exited_at) WITH ORDINALITY AS s (beacon, entered, exited, step)
                WHERE $4::text IS NULL OR p.user_key = $4
                ORDER BY p.day, p.user_key, s.step
                """, parameters + [user]).rows
        }
        let paths = try UserPath.grouped(rows.map { row in
            UserPath.Step(user: row.string(0) ?? "", day: row.string(1) ?? "", beacon: row.string(2) ?? "",
                          entered: Int64(try row.int(3) ?? 0), exited: try row.int(4).map(Int64.init))
        })
        switch output.format {
        case .json: print(paths.map(\.json).joined(), terminator: "")
        case .csv:
            var fields = FieldRows(["user", "day", "step", "beacon", "entered", "exited"])
            for path in paths {
                for (index, step) in path.steps.enumerated() {
                    fields.append([.text(path.user), .text(path.day), .integer(Int64(index + 1)), .text(step.beacon), .time(step.entered),
                                   step.exited.map(FieldRows.Value.time) ?? .null])
                }
            }
            print(try fields.csv(), terminator: "")
        case .table:
            print(TableOutput.render(header: ["USER", "DAY", "VISITS", "PATH (UTC)"], rows: paths.map { path in
                [path.user, path.day, String(path.steps.count), path.text]
            }))
        }
    }
}

struct BusiestReport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "busiest",
        abstract: "Busiest hours per venue: the most users there at once, and the average over the hour (presence.busiest).",
        discussion: """
            Per UTC hour, peak is the largest number of users at the venue at the same instant, mean the person-hours spent \
            there in the hour. Visits overlapping the range count for the part inside it (--since, --from, --to bound the \
            time here, not the start of visits); an open visit lasts until now. Lists each venue's --top hours by peak, \
            then mean; --top 0 lists every hour in order.
            """)
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var range: ReportRange
    @Option(help: "Only this venue.") var venue: String?
    @Option(help: "How many hours to list per venue (0: every hour, in time order).") var top = 10
    @OptionGroup var output: OutputOptions

    func run() async throws {
        guard top >= 0 else { throw ValueError("--top \(top) is not valid: expected 0 or more") }
        let venue = try venue.map { try Slug($0, what: "venue").value }
        let parameters = try range.parameters() + [venue, top]
        let rows = try await withDatabase(connection) { db in
            try await db.query("""
                SELECT venue_key, \(epochMilliseconds("hour")), peak_users, mean_users
                FROM (SELECT b.*, row_number() OVER (PARTITION BY b.venue_key ORDER BY b.peak_users DESC, b.mean_users DESC, b.hour) AS rank
                      FROM presence.busiest(\(ReportRange.startSQL), \(ReportRange.endSQL), $4::text) b) r
                WHERE $5::bigint = 0 OR rank <= $5::bigint
                ORDER BY venue_key, CASE WHEN $5::bigint = 0 THEN 0 ELSE rank END, hour
                """, parameters).rows
        }
        var fields = FieldRows(["venue", "hour", "peak_users", "mean_users"])
        for row in rows {
            fields.append([row.text(0) ?? .null, try row.time(1), try row.integer(2), try row.number(3)])
        }
        try fields.print(output.format) {
            TableOutput.render(header: ["VENUE", "HOUR", "PEAK", "MEAN"], rows: try rows.map { row in
                [row.string(0) ?? "-", Timestamps.iso8601(Int64(try row.int(1) ?? 0)), row.string(2) ?? "",
                 FieldRows.decimal(try row.double(3) ?? 0)]
            })
        }
    }
}
