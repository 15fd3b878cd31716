import Foundation
import Logging
import PresenceCore
import PresencePostgres
import PresenceStore

/// The analysts' reports at volume: a database with `--sessions` synthetic visits (10 million by
/// default; see `SessionGenerator`), then each report query of `ReportQuery.all` run `--runs`
/// times after one warm-up run, with the median time, the plan's top node and the indexes it uses.
enum ReportsBenchmark {
    struct Options {
        var sessions = 10_000_000
        var runs = 5
        /// A database to use as it is (generated into only when it holds no session).
        var database: String?
        /// A server where a throwaway database is made, and dropped at the end unless `keep`.
        var server: String?
        var keep = false
        /// `work_mem` for the queries (the server's own when nil).
        var workMem: String?
    }

    static let usage = """
        usage: presence-bench reports [--sessions 10000000] [--runs 5] [--work-mem 64MB] [--database URL | --server URL [--keep]]
          --database URL   use this database: migrate it, and generate sessions only if it has none
          --server URL     make a throwaway database there (default: PRESENCE_DATABASE_URL's server), dropped
                           at the end unless --keep
          --work-mem SIZE  the queries' work_mem (default: the server's setting)
        """

    static func main(_ arguments: [String]) async {
        do {
            guard let options = try parse(arguments) else {
                print(usage)
                return
            }
            bootstrapBenchLogging()
            try await run(options, logger: Logger(label: "presence-bench"))
        } catch {
            print("presence-bench reports: \(error)")
            exit(1)
        }
    }

    static func run(_ options: Options, logger: Logger) async throws {
        if let database = options.database {
            try await measure(database, options: options, logger: logger)
            return
        }
        guard let server = options.server ?? ProcessInfo.processInfo.environment["PRESENCE_DATABASE_URL"] else {
            throw ValueError("give --database URL, --server URL or PRESENCE_DATABASE_URL")
        }
        let name = "presence_bench_reports_\(UInt32.random(in: .min ... .max))"
        let admin = try await PostgresConnection.connect(PostgresConfiguration(url: server), logger: logger)
        try await admin.query("CREATE DATABASE \(name)")
        let url = ScenarioRun.url(server, database: name)
        let result: Result<Void, any Error>
        do {
            result = .success(try await measure(url, options: options, logger: logger))
        } catch {
            result = .failure(error)
        }
        if options.keep {
            print("kept the database: \(url)")
        } else {
            try await admin.query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        }
        await admin.close()
        try result.get()
    }

    static func measure(_ url: String, options: Options, logger: Logger) async throws {
        let db = try await PostgresConnection.connect(PostgresConfiguration(url: url), logger: logger)
        do {
            try await measure(db, options: options, logger: logger)
            await db.close()
        } catch {
            await db.close()
            throw error
        }
    }

    static func measure(_ db: PostgresConnection, options: Options, logger: Logger) async throws {
        _ = try await db.migrate(logger: logger)
        let existing = try await db.query("SELECT count(*) FROM presence.sessions").rows.first?.int(0) ?? 0
        if existing == 0 {
            let generator = SessionGenerator(count: options.sessions)
            let phases = try await generator.run(on: db) { print($0) }
            print("\n| generation phase | seconds |\n|---|---:|")
            for (phase, seconds) in phases { print("| \(phase) | \(String(format: "%.1f", seconds)) |") }
            print("| total | \(String(format: "%.1f", phases.reduce(0) { $0 + $1.1 })) |")
        } else {
            print("using the \(existing) sessions already in the database")
        }
        try await printSizes(db)
        if let workMem = options.workMem {
            try await db.query("SELECT set_config('work_mem', $1, false)", [workMem])
        }
        let settings = try await db.query("SELECT current_setting('server_version'), current_setting('work_mem'), current_setting('shared_buffers'), "
            + "current_setting('jit'), current_setting('max_parallel_workers_per_gather')").rows.first
        print("\nPostgreSQL \(settings?.string(0) ?? "?"): work_mem \(settings?.string(1) ?? "?"), shared_buffers \(settings?.string(2) ?? "?"), "
            + "jit \(settings?.string(3) ?? "?"), parallel workers per gather \(settings?.string(4) ?? "?")")
        // Sessions are partitioned by month: a plan scans each partition's copy of an index, named
        // after the partition; the table names the index they are copies of.
        let parents = Dictionary(try await db.query("""
            SELECT c.relname, p.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
            WHERE c.relkind = 'i'
            """).rows.compactMap { row in row.string(0).flatMap { child in row.string(1).map { (child, $0) } } }, uniquingKeysWith: { first, _ in first })
        print("\n| report | rows | median ms | min ms | max ms | plan top node | indexes used |\n|---|---:|---:|---:|---:|---|---|")
        for query in ReportQuery.all {
            let plan = try await db.query("EXPLAIN \(query.sql)").rows.compactMap { $0.string(0) }
            var times: [Double] = []
            var rows = 0
            for run in 0 ... options.runs {
                let seconds = try await timed { rows = try await db.query(query.sql).rows.count }
                if run > 0 { times.append(seconds * 1000) }
            }
            times.sort()
            let indexes = PlanSummary.indexes(plan, parents: parents)
            print("| \(query.name) | \(rows) | \(milliseconds(times[times.count / 2])) | \(milliseconds(times.first ?? 0)) | "
                + "\(milliseconds(times.last ?? 0)) | \(PlanSummary.top(plan)) | \(indexes.isEmpty ? "none (sequential scan)" : indexes.joined(separator: ", ")) |")
        }
    }

    static func printSizes(_ db: PostgresConnection) async throws {
        let rows = try await db.query("""
            SELECT c.relname, pg_size_pretty(pg_relation_size(c.oid)) FROM pg_class c
            WHERE c.oid = 'presence.sessions'::regclass
               OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'presence.sessions'::regclass)
            ORDER BY pg_relation_size(c.oid) DESC
            """).rows
        print("\nsizes: " + rows.map { "\($0.string(0) ?? "") \($0.string(1) ?? "")" }.joined(separator: ", "))
    }

    static func milliseconds(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : String(format: "%.1f", value)
    }

    private static func parse(_ arguments: [String]) throws -> Options? {
        var options = Options()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--help", "-h": return nil
            case "--keep": options.keep = true
            case "--sessions", "--runs", "--database", "--server", "--work-mem":
                guard let value = rest.popFirst() else { throw ValueError("\(argument) needs a value") }
                switch argument {
                case "--database": options.database = value
                case "--server": options.server = value
                case "--work-mem": options.workMem = value
                default:
                    guard let number = Int(value.replacingOccurrences(of: "_", with: "")), number > 0 else {
                        throw ValueError("\(argument) '\(value)' is not valid: expected a whole number above 0")
                    }
                    if argument == "--sessions" { options.sessions = number } else { options.runs = number }
                }
            default: throw ValueError("unknown argument '\(argument)'")
            }
        }
        return options
    }
}

/// What an `EXPLAIN` (text format) says about a plan.
enum PlanSummary {
    /// The first line's node, without its costs.
    static func top(_ plan: [String]) -> String {
        guard let first = plan.first else { return "-" }
        return first.components(separatedBy: "  (cost=").first?.trimmingCharacters(in: .whitespaces) ?? first
    }

    /// The indexes any node scans, each once, in the plan's order; a partition's index is named by
    /// its parent's name (`parents`).
    static func indexes(_ plan: [String], parents: [String: String] = [:]) -> [String] {
        var names: [String] = []
        for line in plan {
            for marker in ["Index Scan using ", "Index Only Scan using ", "Bitmap Index Scan on "] {
                guard let range = line.range(of: marker) else { continue }
                let scanned = String(line[range.upperBound...].prefix { $0 != " " })
                let name = parents[scanned] ?? scanned
                if !names.contains(name) { names.append(name) }
            }
        }
        return names
    }
}
