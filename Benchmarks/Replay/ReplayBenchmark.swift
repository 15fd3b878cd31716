import Foundation
import PresenceCore

/// The events a replay decided, counted and folded into one FNV-1a digest of their ids in order
/// (an id names the kind, user, device, beacon and times), so that two builds can be compared.
struct EventTally {
    var count = 0
    private var ids = BenchDigest()
    var digest: UInt64 { ids.value }

    mutating func add(_ actions: [AggregatorCore.Action]) {
        for case .record(.decided(let decided)) in actions {
            for event in decided.events {
                count += 1
                ids.add(event.id)
            }
        }
    }
}

/// How fast the aggregator's decisions are made over a recording, as `presencectl replay` runs them
/// (the same `AggregatorCore` the live aggregator drives):
/// a simulated expo day is recorded in memory (the lines `presencectl record` writes), then
/// replayed: arrival parsing, batch decoding, registry matching, the engine. Prints observations
/// per second on one core, and the time and memory spent. With `--write PATH`, writes the
/// recording to PATH and its registry as `presencectl` argument lines to PATH.registry instead,
/// for timing `presencectl replay` itself (`scripts/replay-bench.sh`). With `--health`, the fleet's
/// health is watched as the live aggregator watches it (its cost on every sighting).
enum ReplayBenchmark {
    static func main(_ arguments: [String]) {
        guard let command = ReplayOptions.read(arguments) else { return }
        let (options, pipeline) = command
        var (lines, registry, observations) = record(people: options.people, minutes: options.minutes)
        if let shards = options.shards {
            lines = split(lines, into: shards)
            registry.shards = shards
        }
        let bytes = lines.reduce(0) { $0 + $1.count }
        print("recording: \(lines.count) lines, \(observations) sightings, \(bytes / 1_000_000) MB (\(options.people) people, \(options.minutes) min, 24 nodes)")
        if let path = options.write {
            write(lines, registry: registry, to: path)
            return
        }
        var rates: [Double] = []
        for run in 1 ... options.runs {
            let started = monotonicNanoseconds()
            var core: AggregatorCore?
            var configuration = AggregatorCore.Configuration()
            configuration.pipeline = pipeline
            configuration.catchUp = false
            if options.health { configuration.health = FleetHealth.Configuration() }
            var events = EventTally()
            var last: Int64 = 0
            for line in lines {
                line.withUnsafeBytes { raw in
                    guard let arrival = Recording.arrival(of: raw) else { return }
                    if core == nil {
                        var started = AggregatorCore(configuration: configuration, registry: registry, now: arrival.received)
                        events.add(started.resume(at: arrival.received))
                        core = started
                    }
                    if options.ticks, arrival.received >= last + 100 { events.add(core?.tick(at: arrival.received) ?? []) }
                    last = arrival.received
                    events.add(core?.receive(topic: arrival.topic, payload: raw, at: arrival.received) ?? [])
                }
            }
            events.add(core?.tick(at: last + 60_000) ?? [])
            let seconds = Double(monotonicNanoseconds() - started) / 1e9
            let rate = Double(core?.pipeline.counters.observations ?? 0) / seconds
            rates.append(rate)
            print("run \(run): \(String(format: "%.2f", seconds)) s, \(events.count) events (digest \(String(events.digest, radix: 16))), \(format(rate)) observations/s")
        }
        let sorted = rates.sorted()
        print("median: \(format(sorted[sorted.count / 2])) observations/s on one core; peak memory \(peakMemoryMB()) MB")
    }

    /// The recording as nodes of a venue of `shards` publish it: each batch in parts, one per shard.
    private static func split(_ lines: [[UInt8]], into shards: Shards) -> [[UInt8]] {
        lines.flatMap { line -> [[UInt8]] in
            guard let arrival = line.withUnsafeBytes(Recording.arrival(of:)), case .sightings(let node) = Topics.nodeMessage(in: arrival.topic),
                  case .success(let decoded) = SightingBatchDecoder.decode(line, topicNode: node) else { return [line] }
            return shards.parts(of: decoded.batch).compactMap { part in
                Recording.line(payload: part.batch.encoded(), topic: "presence/v1/sightings/\(node)/\(part.shard)", received: arrival.received)
            }
        }
    }

    /// A simulated expo recorded as `presencectl record` would write it.
    private static func record(people: Int, minutes: Int) -> ([[UInt8]], Registry, Int) {
        var beacons: [Scenario.Beacon] = []
        var nodes: [Scenario.Node] = []
        for row in 0 ..< 4 {
            for column in 0 ..< 6 {
                let key = "booth-\(row)-\(column)"
                beacons.append(Scenario.Beacon(key: key, x: Double(column) * 7, y: Double(row) * 7))
                nodes.append(Scenario.Node(key: "node-\(row)-\(column)", x: Double(column) * 7, y: Double(row) * 7, beacon: key))
            }
        }
        var random = RandomSource(seed: 99)
        var visitors: [Scenario.Person] = []
        for index in 0 ..< people {
            let stops = (0 ..< 8).map { _ in
                Scenario.Stop(beacon: beacons[Int(random.next() % UInt64(beacons.count))].key, dwell: 30_000 + Int64(random.next() % 90_000))
            }
            visitors.append(Scenario.Person(user: "user-\(index)", device: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:9:\(index)",
                                            arrive: Int64(random.next() % 60_000), entrance: Scenario.Point(x: -5, y: 10), stops: stops,
                                            repeats: true, away: 30_000))
        }
        let scenario = Scenario(venue: "bench", seed: 7, beacons: beacons, nodes: nodes, people: visitors)
        let start: Int64 = 1_763_774_400_000
        guard var simulator = try? VenueSimulator(scenario: scenario, start: start) else { return ([], Registry(), 0) }
        var batchers = Dictionary(uniqueKeysWithValues: nodes.map { ($0.key, SightingBatcher(node: $0.key, interval: 500)) })
        var lines: [[UInt8]] = []
        var count = 0
        for step in stride(from: start + 100, through: start + Int64(minutes) * 60_000, by: 100) {
            for heard in simulator.advance(to: step) {
                count += 1
                if let batch = batchers[heard.node]?.add(heard.sighting, at: step), let line = Recording.line(payload: batch.encoded(), topic: "presence/v1/sightings/\(batch.node)", received: step + 20) {
                    lines.append(line)
                }
            }
            for key in batchers.keys.sorted() {
                if let batch = batchers[key]?.due(at: step), let line = Recording.line(payload: batch.encoded(), topic: "presence/v1/sightings/\(key)", received: step + 20) {
                    lines.append(line)
                }
            }
        }
        let registry = Registry(
            venues: [.init(key: "bench")],
            beacons: beacons.map { Registry.Beacon(key: $0.key, venue: "bench", x: $0.x, y: $0.y) },
            nodes: nodes.map { Registry.Node(key: $0.key, venue: "bench", beacon: $0.beacon, x: $0.x, y: $0.y) },
            users: visitors.map { Registry.User(key: $0.user) },
            devices: visitors.compactMap { person in person.device.map { Registry.Device(identity: $0, user: person.user) } })
        return (lines, registry, count)
    }

    /// The recording as `presencectl record` writes it, and `presencectl` argument lines that
    /// register what it needs.
    private static func write(_ lines: [[UInt8]], registry: Registry, to path: String) {
        var recording = Data()
        for line in lines {
            recording.append(contentsOf: line)
            recording.append(0x0A)
        }
        var commands = registry.venues.keys.sorted().map { "venue add \($0)" }
        commands += registry.beacons.values.sorted { $0.key < $1.key }.map { beacon in
            "beacon add \(beacon.key) --venue \(beacon.venue ?? "") --x \(beacon.x ?? 0) --y \(beacon.y ?? 0)"
        }
        commands += registry.nodes.values.sorted { $0.key < $1.key }.map { node in
            "node add \(node.key) --venue \(node.venue ?? "") --beacon \(node.beacon ?? "") --x \(node.x ?? 0) --y \(node.y ?? 0)"
        }
        commands += registry.users.keys.sorted().map { "user add \($0)" }
        commands += registry.devices.values.sorted { $0.identity < $1.identity }.map { "device add \($0.identity) --user \($0.user)" }
        do {
            try recording.write(to: URL(fileURLWithPath: path))
            try Data((commands.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path + ".registry"))
            print("wrote \(path) and \(path).registry (\(commands.count) presencectl commands)")
        } catch {
            print("cannot write \(path): \(error)")
            exit(1)
        }
    }

    private static func monotonicNanoseconds() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }

    /// The process's peak resident memory (VmHWM in /proc/self/status), MB.
    private static func peakMemoryMB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return (Int(line.filter(\.isNumber)) ?? 0) / 1024
    }

    private static func format(_ rate: Double) -> String {
        rate >= 1e6 ? String(format: "%.2f M", rate / 1e6) : String(format: "%.0f k", rate / 1e3)
    }
}
