import Foundation
import Glibc
import PresenceAggregator
import PresenceCore

/// What the aggregator's core holds per registered device (issue 20's target: at most 2 KiB), apart
/// from the queues around it: a registry of `--devices` users with one tag each at `--nodes` booths,
/// then `--seconds` of batches in which every tag is heard by three nodes every second, driven
/// through the same `AggregatorCore` the live aggregator runs, with the actions dropped as they come.
/// With `--zones`, every ten booths lie in a zone `row-K` and every row in zone `hall`, so everyone
/// present is in two zones.
/// Resident memory is read before the registry, after it, after the core is made, and at the end
/// (everyone present); each step is printed per device. Last, the free memory malloc keeps (blocks
/// freed since the enter wave, which the resident figure counts) is given back with `malloc_trim`,
/// and what that returned is printed apart.
///
/// The CPU time the core's own calls take (its thread's, the batches' encoding left out) is
/// printed too, per 1,000 sightings: with `--ticks`, the core is ticked every 100 ms of the batches'
/// time, as the live loop ticks it, so that what a tick costs with this many people counts.
/// `--set KEY=VALUE` changes an engine figure (`--set decide=dwell`).
enum MemoryBenchmark {
    static func main(_ arguments: [String]) {
        if arguments.contains("--help") {
            print("presence-bench memory [--devices N] [--nodes N] [--seconds S] [--page] [--zones] [--ticks] [--set KEY=VALUE]...   (defaults 100000 devices, 50 nodes, 20 s)")
            return
        }
        let pipeline: PresencePipeline.Configuration
        do throws(ValueError) {
            var overrides: [(key: String, value: String)] = []
            for (index, argument) in arguments.enumerated() where argument == "--set" && index + 1 < arguments.count {
                overrides.append(try EngineSettings.override(arguments[index + 1]))
            }
            pipeline = try EngineSettings.configuration(overrides)
        } catch {
            warn(error.message)
            exit(64)
        }
        let ticks = arguments.contains("--ticks") ? 10 : 1
        let devices = benchArgument(arguments, "--devices").flatMap { Int($0) }.map { max(1, $0) } ?? 100_000
        let nodes = benchArgument(arguments, "--nodes").flatMap { Int($0) }.map { max(3, $0) } ?? 50
        let seconds = benchArgument(arguments, "--seconds").flatMap { Int($0) }.map { max(5, $0) } ?? 20
        let start: Int64 = 1_763_774_400_000

        let base = residentBytes()
        let registry = venue(devices: devices, nodes: nodes, zones: arguments.contains("--zones"))
        let withRegistry = residentBytes()
        var configuration = AggregatorCore.Configuration()
        configuration.pipeline = pipeline
        configuration.catchUp = false
        configuration.page = arguments.contains("--page")
        configuration.health = FleetHealth.Configuration()
        var core = AggregatorCore(configuration: configuration, registry: registry, now: start)
        _ = core.resume(at: start)
        let withCore = residentBytes()

        var enters = 0
        var seq: Int64 = 0
        var coreCPU: Int64 = 0
        for second in 0 ..< Int64(seconds) {
            for node in 0 ..< nodes {
                // The tags whose three nearest nodes include this one: home node, and the next two.
                var sightings: [Sighting] = []
                sightings.reserveCapacity(devices / nodes * 3 + 3)
                for rank in 0 ..< 3 {
                    var index = (node - rank + nodes) % nodes
                    while index < devices {
                        sightings.append(Sighting(ts: start + second * 1_000 + Int64(index % 1_000), id: device(index), rssi: -55 - rank * 8, tx: -59))
                        index += nodes
                    }
                }
                seq += 1
                let batch = SightingBatch(node: "node-\(node)", seq: seq, sent: start + second * 1_000 + 999, sightings: sightings)
                let payload = batch.encoded()
                let before = threadCPUNanoseconds()
                let actions = payload.withUnsafeBytes { core.receive(topic: "presence/v1/sightings/node-\(node)", payload: $0, at: batch.sent + 20) }
                coreCPU += threadCPUNanoseconds() - before
                enters += count(actions)
                // With --ticks, the tenth of the second this node's batch closes is ticked.
                if ticks > 1, (node + 1) * ticks / nodes != node * ticks / nodes {
                    let before = threadCPUNanoseconds()
                    let actions = core.tick(at: start + second * 1_000 + Int64((node + 1) * ticks / nodes) * 1_000 / Int64(ticks) + 20)
                    coreCPU += threadCPUNanoseconds() - before
                    enters += count(actions)
                }
            }
            if ticks == 1 {
                let before = threadCPUNanoseconds()
                let actions = core.tick(at: start + second * 1_000 + 1_020)
                coreCPU += threadCPUNanoseconds() - before
                enters += count(actions)
            }
        }
        let present = (0 ..< nodes).reduce(0) { $0 + core.board.count(at: "booth-\($1)") }
        let withEveryone = residentBytes()
        FreeMemory.giveBack()
        let trimmed = residentBytes()

        func perDevice(_ bytes: Int) -> String {
            let value = Double(bytes) / Double(devices)
            return value >= 1_024 ? String(format: "%.2f KiB", value / 1_024) : String(format: "%.0f B", value)
        }
        print("\(devices) devices, \(nodes) nodes, \(seconds) s: \(enters) enters, \(present) present, \(core.pipeline.counters.observations) sightings")
        let sightings = core.pipeline.counters.observations
        let perThousand = String(format: "%.2f s, %.4f", Double(coreCPU) / 1e9, Double(coreCPU) / 1e9 / Double(max(1, sightings)) * 1_000)
        print("core CPU: \(perThousand) CPU-s per 1,000 sightings (--decide \(pipeline.engine.decision), \(ticks) tick\(ticks == 1 ? "" : "s") a second)")
        print("| step | resident | per device |")
        print("|---|---:|---:|")
        print("| registry | \(megabytes(withRegistry - base)) | \(perDevice(withRegistry - base)) |")
        print("| core made (engine tables) | \(megabytes(withCore - withRegistry)) | \(perDevice(withCore - withRegistry)) |")
        print("| everyone present | \(megabytes(withEveryone - withCore)) | \(perDevice(withEveryone - withCore)) |")
        print("| total | \(megabytes(withEveryone - base)) | \(perDevice(withEveryone - base)) |")
        print("| of which free memory malloc keeps | \(megabytes(withEveryone - trimmed)) | \(perDevice(withEveryone - trimmed)) |")
        print("| total after malloc_trim | \(megabytes(trimmed - base)) | \(perDevice(trimmed - base)) |")
        withExtendedLifetime((registry, core)) {}
    }

    static func device(_ index: Int) -> String { "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:\(1 + index / 10_000):\(index % 10_000)" }

    static func venue(devices: Int, nodes: Int, zones: Bool) -> Registry {
        var registry = Registry(
            venues: [.init(key: "bench")],
            zones: zones ? [.init(key: "hall", venue: "bench")] + (0 ..< (nodes + 9) / 10).map { .init(key: "row-\($0)", venue: "bench", parent: "hall") } : [],
            beacons: (0 ..< nodes).map { Registry.Beacon(key: "booth-\($0)", venue: "bench", x: Double($0 * 5), y: 0, zone: zones ? "row-\($0 / 10)" : nil) },
            nodes: (0 ..< nodes).map { Registry.Node(key: "node-\($0)", venue: "bench", beacon: "booth-\($0)", x: Double($0 * 5), y: 0) })
        registry.users.reserveCapacity(devices)
        registry.devices.reserveCapacity(devices)
        for index in 0 ..< devices {
            registry.users["u-\(index)"] = Registry.User(key: "u-\(index)")
            // One string for the key and the identity, as the registry the aggregator loads has.
            let identity = device(index)
            registry.devices[identity] = Registry.Device(identity: identity, user: "u-\(index)", tx: -59)
        }
        return registry
    }

    static func count(_ actions: [AggregatorCore.Action]) -> Int {
        var enters = 0
        for case .record(.decided(let decided)) in actions { enters += decided.events.filter { $0.kind == .enter }.count }
        return enters
    }

    /// The CPU time this thread has used, ns.
    static func threadCPUNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Resident memory now (`VmRSS`), bytes: what the issue's figures count, freed blocks malloc
    /// keeps included.
    static func residentBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.filter(\.isNumber)) ?? 0) * 1_024
    }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
}
