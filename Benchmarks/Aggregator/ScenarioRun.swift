import Foundation
import Logging
import PresenceCore
import PresenceMQTT
import PresencePostgres
import PresenceStore

/// One scenario from a fresh database and a fresh aggregator to its figures.
struct ScenarioRun {
    let scenario: LoadScenario
    let options: AggregatorBenchmark.Options
    let logger: Logger

    /// Runs the scenario in a database of its own, dropped afterwards.
    func run() async throws -> LoadResult {
        let name = "presence_bench_\(UInt32.random(in: .min ... .max))"
        let admin = try await PostgresConnection.connect(PostgresConfiguration(url: options.databaseURL), logger: logger)
        try await admin.query("CREATE DATABASE \(name)")
        let result: Result<LoadResult, any Error>
        do {
            result = .success(try await run(in: Self.url(options.databaseURL, database: name)))
        } catch {
            result = .failure(error)
        }
        try await admin.query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        await admin.close()
        return try result.get()
    }

    private func run(in databaseURL: String) async throws -> LoadResult {
        let database = try await PostgresConnection.connect(PostgresConfiguration(url: databaseURL), logger: logger)
        if let migrator = options.migrator {
            try Self.migrate(databaseURL, with: migrator)
        } else {
            _ = try await database.migrate(logger: logger)
        }
        let venue = BenchVenue(scenario: scenario)
        try await venue.register(database)
        if scenario.shards > 1 { try await database.setShards(try Shards(count: scenario.shards)) }

        let topics = try Topics(prefix: "bench\(UInt32.random(in: .min ... .max))")
        let broker = try MQTTURL(parsing: options.brokerURL)
        let watcher = try BusWatcher(brokerURL: broker, topics: topics, logger: logger)
        let reading = try await watcher.start()
        let aggregators = try (0 ..< scenario.aggregators).map { try startAggregator(databaseURL: databaseURL, topics: topics, index: $0) }
        defer { for aggregator in aggregators where aggregator.isRunning { aggregator.terminate() } }
        try await until(60, "the aggregator to say it is online") { watcher.aggregatorOnline }
        // Alone on one shard, an aggregator is online once it owns it (and a build from before
        // shards, run with --aggregator, owns none).
        if scenario.aggregators > 1 || scenario.shards > 1 {
            try await untilAsync(60, "every shard owned, each aggregator owning its share") {
                let owners = (try? await database.shardOwners()) ?? []
                let share = ShardShare.fairShare(count: scenario.shards, live: scenario.aggregators)
                return owners.count == scenario.shards && owners.allSatisfy { $0.clientID != nil }
                    && Dictionary(grouping: owners, by: { $0.clientID ?? "" }).values.allSatisfy { $0.count <= share }
            }
        }

        let generator = try LoadGenerator(scenario: scenario, brokerURL: broker, topics: topics, logger: logger)
        try await generator.connect()
        let probes = aggregators.map { ProcessProbe(pid: $0.processIdentifier) }
        let brokerProbe = options.brokerPID.map(ProcessProbe.init(pid:))
        let start = WallClock.milliseconds() + 500
        try await Task.sleep(for: .milliseconds(450))
        let cpuBefore = (probes.reduce(0) { $0 + $1.cpuSeconds }, brokerProbe?.cpuSeconds ?? 0, ProcessProbe.ownCPUSeconds)

        let poller = scenario.crowd ? Task { await CrowdPoller(database: database).run() } : nil
        let sampler = options.residentEvery.map { every in
            Task { await ResidentSampler(probes: probes, watcher: watcher, generator: generator, every: every).run(from: start) }
        }
        await generator.run(from: start)
        let residentAtEnd = probes.reduce(0) { $0 + $1.residentMiB }
        sampler?.cancel()
        try await Task.sleep(for: .seconds(2))
        let measuredUntil = WallClock.milliseconds()
        let cpuAfter = (probes.reduce(0) { $0 + $1.cpuSeconds }, brokerProbe?.cpuSeconds ?? 0, ProcessProbe.ownCPUSeconds)
        let load = generator.snapshot
        if let lastHeard = load.crowdLastHeard {
            // The crowd's exits fall due 15 s after its last sighting; wait for them, or give up 30 s later.
            let deadline = lastHeard + 45_000
            while WallClock.milliseconds() < deadline,
                  watcher.events.filter({ !$0.enter && $0.user.hasPrefix("crowd-") }).count < LoadScenario.crowdSize {
                try await Task.sleep(for: .milliseconds(200))
            }
            try await Task.sleep(for: .seconds(1))
        }
        poller?.cancel()
        let stored = await poller?.value

        var result = LoadResult(scenario: scenario)
        let seconds = Double(measuredUntil - start) / 1000
        result.offered = Double(load.sightings) / Double(scenario.seconds)
        result.sent = load.sightings
        // Every aggregator publishes its counters on the one stats topic: with several, the last
        // message is one aggregator's (the read share is then not known).
        let read = scenario.aggregators == 1 ? watcher.stats.last { $0.received <= measuredUntil + 1_500 }?.sightings ?? 0 : 0
        result.readShare = scenario.aggregators == 1 ? Double(read) / Double(max(1, load.sightings)) : .nan
        result.cpuShare = (cpuAfter.0 - cpuBefore.0) / seconds
        result.cpuPerThousand = (cpuAfter.0 - cpuBefore.0) / (Double(load.sightings) / 1000)
        result.brokerCPUShare = (cpuAfter.1 - cpuBefore.1) / seconds
        result.benchCPUShare = (cpuAfter.2 - cpuBefore.2) / seconds
        result.peakMiB = probes.reduce(0) { $0 + $1.peakResidentMiB }
        result.residentAtEndMiB = residentAtEnd
        result.generatorLag = load.worstLag
        result.generatorQueue = load.deepestQueue
        result.measure(latency: watcher.stats.filter { $0.received >= start && $0.received <= measuredUntil + 1_500 })
        result.measure(events: watcher.events, start: start, load: load, stored: stored)

        if aggregators.count > 1, let victim = aggregators.first {
            // One dies: how long until the others own every shard again.
            let killed = ContinuousClock.now
            kill(victim.processIdentifier, SIGKILL)
            try await untilAsync(30, "the survivors to own every shard") {
                let owners = (try? await database.shardOwners()) ?? []
                return owners.count == scenario.shards && owners.allSatisfy { $0.clientID != nil && $0.clientID != Self.clientID(0, topics) }
            }
            result.takeoverSeconds = (ContinuousClock.now - killed) / .seconds(1)
        }
        let stopping = ContinuousClock.now
        let running = aggregators.filter(\.isRunning)
        for aggregator in running { aggregator.terminate() }
        do {
            try await until(60, "the aggregator to stop") { !running.contains(where: \.isRunning) }
            result.stopSeconds = (ContinuousClock.now - stopping) / .seconds(1)
        } catch {
            for aggregator in running where aggregator.isRunning { kill(aggregator.processIdentifier, SIGKILL) }
            result.stopSeconds = nil
        }
        await generator.stop()
        await watcher.stop()
        reading.cancel()
        await database.close()
        return result
    }

    /// Makes the schema with `presencectl`'s migrate (another build's).
    private static func migrate(_ databaseURL: String, with presencectl: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: presencectl)
        process.arguments = ["migrate", "--database", databaseURL]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ValueError("\(presencectl) migrate exited with \(process.terminationStatus)") }
    }

    static func clientID(_ index: Int, _ topics: Topics) -> String { "\(topics.prefix)-aggregator-\(index)" }

    private func startAggregator(databaseURL: String, topics: Topics, index: Int) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: options.aggregatorPath)
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("\(topics.prefix)-state-\(index)").path
        process.arguments = ["--stats-interval", "1s", "--log-level", "warning", "--clean-session", "--client-id", Self.clientID(index, topics),
                             "--state-dir", state] + Self.dialectFlags(scenario.dialect, topics) + options.passed
        var environment = ProcessInfo.processInfo.environment
        environment["PRESENCE_DATABASE_URL"] = databaseURL
        environment["PRESENCE_BROKER_URL"] = options.brokerURL
        if scenario.tls, let tls = options.tlsBroker {
            environment["PRESENCE_BROKER_URL"] = tls.url
            process.arguments?.append(contentsOf: ["--ca-file", tls.caFile])
        }
        environment["PRESENCE_TOPIC_PREFIX"] = topics.prefix
        process.environment = environment
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("\(topics.prefix)-aggregator-\(index).log")
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else { throw ValueError("cannot write \(log.path)") }
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        return process
    }

    /// The aggregator's flags that read the nodes of `dialect`, under the run's own prefix.
    static func dialectFlags(_ dialect: LoadScenario.Dialect, _ topics: Topics) -> [String] {
        switch dialect {
        case .native: []
        case .espresense: ["--espresense", LoadGenerator.foreignPrefix(dialect, topics)]
        case .gateway: ["--openmqttgateway", LoadGenerator.foreignPrefix(dialect, topics)]
        }
    }

    /// The same server, another database.
    static func url(_ url: String, database: String) -> String {
        guard let slash = url.lastIndex(of: "/"), url[..<slash].hasSuffix("//") == false else { return url + "/" + database }
        return String(url[..<slash]) + "/" + database
    }

    private func untilAsync(_ seconds: Double, _ what: String, _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !(await condition()) {
            guard ContinuousClock.now < deadline else { throw ValueError("timed out after \(seconds) s waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    private func until(_ seconds: Double, _ what: String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ValueError("timed out after \(seconds) s waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// Prints the aggregators' resident memory every `every` seconds while the load runs, with how
/// many sightings were sent and how many the aggregator said it had read (its last stats).
struct ResidentSampler {
    let probes: [ProcessProbe]
    let watcher: BusWatcher
    let generator: LoadGenerator
    let every: Int

    func run(from start: Int64) async {
        var due = start
        while true {
            due += Int64(every) * 1000
            guard (try? await Task.sleep(for: .milliseconds(max(0, due - WallClock.milliseconds())))) != nil else { return }
            let resident = probes.reduce(0) { $0 + $1.residentMiB }
            let read = watcher.stats.last?.sightings ?? 0
            print(String(format: "rss at %4d s: %6.1f MiB (sent %d, read %d)", (due - start) / 1000, resident, generator.snapshot.sightings, read))
        }
    }
}

/// Polls the crowd's sessions, noting when all 5,000 were open and when all were closed.
struct CrowdPoller {
    let database: PostgresConnection

    /// When the crowd's sessions were all open, and when all closed (wall ms).
    struct Times: Sendable {
        var allOpen: Int64?
        var allClosed: Int64?
    }

    func run() async -> Times {
        var times = Times()
        while !Task.isCancelled, times.allClosed == nil {
            let row = try? await database.query("""
                SELECT count(*) FILTER (WHERE exited_at IS NULL), count(*) FILTER (WHERE exited_at IS NOT NULL)
                FROM presence.sessions WHERE user_key LIKE 'crowd-%'
                """).rows.first
            let open = (try? row?.int(0)) ?? 0
            let closed = (try? row?.int(1)) ?? 0
            let now = WallClock.milliseconds()
            if times.allOpen == nil, open == LoadScenario.crowdSize { times.allOpen = now }
            if closed == LoadScenario.crowdSize { times.allClosed = now }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return times
    }
}
