import Foundation
import Logging
import PresenceCore

/// The aggregator end to end: a load generator publishes SightingBatches as real nodes do through
/// a real mosquitto at QoS 1 to a real `presence-aggregator` with a real PostgreSQL, and a
/// subscriber and the database are watched. Run through `scripts/aggregator-bench.sh`, which
/// starts the servers and passes their addresses.
enum AggregatorBenchmark {
    struct Options {
        var aggregatorPath: String
        var brokerURL: String
        var databaseURL: String
        var brokerPID: Int32?
        var quick = false
        var only: [String] = []
        /// Flags passed on to every aggregator run (`--pass`), to compare settings.
        var passed: [String] = []
        /// Each scenario runs once per layout: (aggregators, shards).
        var layouts: [(aggregators: Int, shards: Int)] = [(1, 1)]
        /// Each scenario runs once per transport of the aggregator's (false: plain TCP, true: TLS),
        /// in this order.
        var transports = [false]
        /// The broker's TLS listener and the CA that signed it (`PRESENCE_BROKER_TLS=on scripts/servers.sh`).
        var tlsBroker: (url: String, caFile: String)?
        /// The load's length, s, instead of each scenario's own (`--seconds`).
        var seconds: Int?
        /// How often the aggregators' resident memory is printed while the load runs, s (`--rss-every`).
        var residentEvery: Int?
        /// A presencectl whose `migrate` makes each run's schema instead of this build's (`--migrate`).
        var migrator: String?
    }

    static let usage = """
        usage: presence-bench aggregator [--quick] [--only TEXT]... [--aggregator PATH] [--broker-pid PID] [--pass FLAG]... [--layouts AxS,...]
                                         [--transports plain,tls,...] [--seconds S] [--rss-every S] [--migrate PRESENCECTL]
          Needs PRESENCE_BROKER_URL and PRESENCE_DATABASE_URL (a server where it may create databases);
          scripts/aggregator-bench.sh sets them up. --aggregator defaults to presence-aggregator beside this program;
          --pass hands a flag to it (--pass --publish-window=100); --layouts runs each scenario with A aggregators
          sharing S shards, one layout after the other (default 1x1; 1x1,2x8 compares sharding in one run);
          --transports runs each scenario with the aggregator on plain TCP or TLS, in the order given
          (plain,tls,tls,plain alternates them in one run; TLS needs PRESENCE_TLS_BROKER_URL and PRESENCE_TLS_BROKER_CA).
          --seconds runs every load that long instead of 60 s (30 with --quick); --rss-every prints the
          aggregators' resident memory every S seconds while the load runs; --migrate makes each run's schema
          with that presencectl's migrate (an older commit's, beside --aggregator; a schema without zones gets none).
        """

    static func main(_ arguments: [String]) async {
        do {
            guard let options = try parse(arguments) else {
                print(usage)
                return
            }
            bootstrapBenchLogging()
            let logger = Logger(label: "presence-bench")
            var rows: [String] = []
            let scenarios = LoadScenario.all(quick: options.quick).filter { scenario in options.only.isEmpty || options.only.contains(where: scenario.name.contains) }
            for base in scenarios {
              for layout in options.layouts {
               for tls in options.transports {
                var scenario = base
                (scenario.aggregators, scenario.shards) = layout
                scenario.tls = tls
                if let seconds = options.seconds { scenario.seconds = seconds }
                print("running: \(scenario.title) for \(scenario.seconds) s ...")
                do {
                    let result = try await ScenarioRun(scenario: scenario, options: options, logger: logger).run()
                    rows.append(result.row)
                    print(LoadResult.header)
                    print(result.row)
                } catch {
                    rows.append("| \(scenario.title) | failed: \(error) |")
                    print("failed: \(error)")
                }
               }
              }
            }
            print("\nall scenarios:\n\(LoadResult.header)")
            rows.forEach { print($0) }
        } catch {
            print("presence-bench aggregator: \(error)")
            exit(1)
        }
    }

    private static func parse(_ arguments: [String]) throws -> Options? {
        let environment = ProcessInfo.processInfo.environment
        guard let broker = environment["PRESENCE_BROKER_URL"], let database = environment["PRESENCE_DATABASE_URL"] else {
            throw ValueError("PRESENCE_BROKER_URL and PRESENCE_DATABASE_URL must be set (scripts/aggregator-bench.sh sets them)")
        }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("presence-aggregator").path
        var options = Options(aggregatorPath: beside, brokerURL: broker, databaseURL: database)
        if let url = environment["PRESENCE_TLS_BROKER_URL"], let caFile = environment["PRESENCE_TLS_BROKER_CA"] { options.tlsBroker = (url, caFile) }
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--help", "-h": return nil
            case "--quick": options.quick = true
            case "--only", "--aggregator", "--broker-pid", "--pass", "--layouts", "--transports", "--seconds", "--rss-every", "--migrate":
                guard let value = rest.popFirst() else { throw ValueError("\(argument) needs a value") }
                if argument == "--only" { options.only.append(value) }
                if argument == "--aggregator" { options.aggregatorPath = value }
                if argument == "--pass" { options.passed.append(value) }
                if argument == "--layouts" { options.layouts = try layouts(value) }
                if argument == "--transports" { options.transports = try transports(value, tls: options.tlsBroker != nil) }
                if argument == "--seconds" { options.seconds = try seconds(value, argument) }
                if argument == "--rss-every" { options.residentEvery = try seconds(value, argument) }
                if argument == "--migrate" { options.migrator = value }
                if argument == "--broker-pid" {
                    guard let pid = Int32(value) else { throw ValueError("--broker-pid '\(value)' is not valid: expected a process id") }
                    options.brokerPID = pid
                }
            default:
                throw ValueError("argument '\(argument)' is not known: expected --quick, --only TEXT, --aggregator PATH, --broker-pid PID, --pass FLAG, --layouts AxS,..., --transports plain,tls, --seconds S, --rss-every S or --migrate PRESENCECTL")
            }
        }
        return options
    }

    /// "plain,tls": false for plain TCP, true for TLS, in order.
    private static func transports(_ text: String, tls: Bool) throws -> [Bool] {
        try text.split(separator: ",", omittingEmptySubsequences: false).map { item in
            switch item {
            case "plain": return false
            case "tls" where tls: return true
            case "tls": throw ValueError("--transports tls needs PRESENCE_TLS_BROKER_URL and PRESENCE_TLS_BROKER_CA (PRESENCE_BROKER_TLS=on scripts/servers.sh)")
            default: throw ValueError("--transports '\(text)' is not valid: expected plain or tls, comma-separated, such as plain,tls")
            }
        }
    }

    /// A whole number of seconds from 1 to 86,400.
    private static func seconds(_ text: String, _ flag: String) throws -> Int {
        guard let seconds = Int(text), (1 ... 86_400).contains(seconds) else {
            throw ValueError("\(flag) '\(text)' is not valid: expected whole seconds from 1 to 86400")
        }
        return seconds
    }

    /// "1x1,2x8": aggregators × shards, each 1 to 8 aggregators and 1 to 1,024 shards.
    private static func layouts(_ text: String) throws -> [(aggregators: Int, shards: Int)] {
        try text.split(separator: ",").map { item in
            let parts = item.split(separator: "x")
            guard parts.count == 2, let aggregators = Int(parts[0]), let shards = Int(parts[1]), (1 ... 8).contains(aggregators),
                  (1 ... Shards.maximum).contains(shards) else {
                throw ValueError("--layouts '\(text)' is not valid: expected aggregators x shards, comma-separated, such as 1x1,2x8")
            }
            return (aggregators, shards)
        }
    }
}
