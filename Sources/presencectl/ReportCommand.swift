import ArgumentParser
import PresenceCLI
import PresenceCore
import PresenceDatabaseCLI
import PresencePostgres

/// `presencectl report ...`: the analysts' reports of `schemas/sql/v012_reports.sql`, each a
/// table, JSON lines or CSV.
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Analysts' reports: dwell per beacon, visits per hour and day, who was where, paths, busiest times.",
        discussion: """
            A visit is one session: a user at a beacon from enter to exit. Reports over a time range take the visits that \
            began in it (--since, or --from and --to); times are UTC unless a time given carries an offset.
            """,
        subcommands: [DwellReport.self, HourlyReport.self, DailyReport.self, WhereReport.self, PathsReport.self, BusiestReport.self])
}

/// Which visits a report covers, by when they began: `--since`, or `--from` and `--to`.
struct ReportRange: ParsableArguments {
    @Option(help: "Only visits that began within this long ago, such as 7d.") var since: String?
    @Option(help: "Only visits that began at or after this time, such as 2026-11-22 or 2026-11-22T09:00:00Z.") var from: String?
    @Option(help: "Only visits that began before this time.") var to: String?

    /// SQL for the range's start and end, from the parameters `$1`, `$2` and `$3` of `parameters()`.
    static let startSQL = "COALESCE($1::timestamptz, now() - $2::bigint * INTERVAL '1 millisecond', '-infinity')"
    static let endSQL = "COALESCE($3::timestamptz, 'infinity')"

    /// `$1` the start given, `$2` the length of `--since` in ms, `$3` the end given.
    func parameters() throws -> [PostgresParameter] {
        guard since == nil || from == nil else { throw ValueError("--since '\(since ?? "")' and --from '\(from ?? "")' cannot be used together: give one") }
        let window = try since.map { Int(try DurationText.milliseconds($0, what: "--since")) }
        let start = try from.map { try TimeText.milliseconds($0, what: "--from") }
        let end = try to.map { try TimeText.milliseconds($0, what: "--to") }
        if let start, let end, start >= end {
            throw ValueError("--to '\(to ?? "")' is not valid: expected a time after --from '\(from ?? "")'")
        }
        return [start.map(Timestamps.iso8601), window, end.map(Timestamps.iso8601)]
    }

    var isGiven: Bool { since != nil || from != nil || to != nil }
}

/// `--venue` and `--beacon` filters, checked as keys.
struct PlaceFilter: ParsableArguments {
    @Option(help: "Only this venue.") var venue: String?
    @Option(help: "Only this beacon.") var beacon: String?

    /// The venue and the beacon, nil when not given.
    func parameters() throws -> [PostgresParameter] {
        [try venue.map { try Slug($0, what: "venue").value }, try beacon.map { try Slug($0, what: "beacon").value }]
    }
}

/// What the reports per beacon over a range (dwell, hourly, daily) take, and their query.
struct BeaconReportOptions: ParsableArguments {
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var range: ReportRange
    @OptionGroup var place: PlaceFilter
    @OptionGroup var output: OutputOptions

    /// `columns` of the report function `presence.<function>` over the range, for the venue and
    /// beacon given, in `order`.
    func rows(_ columns: String, of function: String, orderedBy order: String) async throws -> [PostgresRow] {
        let parameters = try range.parameters() + place.parameters()
        return try await withDatabase(connection) { db in
            try await db.query("""
                SELECT \(columns) FROM presence.\(function)(\(ReportRange.startSQL), \(ReportRange.endSQL))
                WHERE ($4::text IS NULL OR venue_key = $4) AND ($5::text IS NULL OR beacon_key = $5)
                ORDER BY \(order)
                """, parameters).rows
        }
    }
}

/// SQL that selects a `timestamptz` as epoch milliseconds.
func epochMilliseconds(_ column: String) -> String {
    "(EXTRACT(EPOCH FROM \(column)) * 1000)::bigint"
}
