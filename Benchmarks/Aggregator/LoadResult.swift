import Foundation

/// The figures of one scenario.
struct LoadResult {
    let scenario: LoadScenario
    var offered = 0.0
    var sent = 0
    /// The share of the sent sightings the aggregator had read 1.5 s after the load ended (NaN:
    /// not known, with several aggregators).
    var readShare = 0.0
    /// Aggregator CPU time over wall time (1.0 is one core).
    var cpuShare = 0.0
    var cpuPerThousand = 0.0
    var brokerCPUShare = 0.0
    var benchCPUShare = 0.0
    var peakMiB = 0.0
    /// The aggregators' resident memory when the load ended.
    var residentAtEndMiB = 0.0
    var generatorLag: Int64 = 0
    var generatorQueue = 0
    /// Decision to acknowledgement, ms: the count-weighted mean of each second's median, and the
    /// worst second's 99th percentile.
    var latencyP50 = 0.0
    var latencyP99 = 0
    /// Seconds from the start of the load until bulk devices' first enters were published.
    var firstEnters: [Double] = []
    /// Seconds from each move of the marker until its enter at the other booth was published; nil
    /// where none came.
    var moves: [Double?] = []
    var crowd: Crowd?
    /// How long the aggregator took to stop after SIGTERM; nil when it had not stopped after 60 s.
    var stopSeconds: Double? = 0
    /// With several aggregators: seconds from `kill -9` of one until the others owned every shard.
    var takeoverSeconds: Double?

    /// The crowd's figures, s: enters after the crowd appeared, exits after they fell due (last
    /// sighting + 15 s); and how long the 5,000 enters took to come out, from the first to the last.
    struct Crowd {
        var entersPublished: Double?
        var entersSpread: Double?
        var entersStored: Double?
        var exitsPublished: Double?
        var exitsStored: Double?
    }

    mutating func measure(latency stats: [BusWatcher.Stats]) {
        let counted = stats.filter { $0.latencyCount > 0 }
        let total = counted.reduce(0) { $0 + $1.latencyCount }
        latencyP50 = total == 0 ? 0 : counted.reduce(0.0) { $0 + Double($1.latencyCount * $1.p50) } / Double(total)
        latencyP99 = counted.map(\.p99).max() ?? 0
    }

    mutating func measure(events: [BusWatcher.Event], start: Int64, load: LoadGenerator.Counters, stored: CrowdPoller.Times?) {
        var firstEnter: [String: Int64] = [:]
        for event in events where event.enter && event.user.hasPrefix("u-") && firstEnter[event.user] == nil {
            firstEnter[event.user] = event.received
        }
        firstEnters = firstEnter.values.map { Double($0 - start) / 1000 }.sorted()
        let marker = events.filter { $0.enter && $0.user == "marker" }
        for (index, move) in load.moves.enumerated() {
            let target = index % 2 == 0 ? BenchVenue.booth(1) : BenchVenue.booth(0)
            let next = load.moves.count > index + 1 ? load.moves[index + 1] : .max
            let arrival = marker.first { $0.received > move && $0.received < next && $0.beacon == target }
            moves.append(arrival.map { Double($0.received - move) / 1000 })
        }
        guard let appeared = load.crowdAppeared, let lastHeard = load.crowdLastHeard else { return }
        let due = lastHeard + 15_000
        let enters = events.filter { $0.enter && $0.user.hasPrefix("crowd-") }
        let exits = events.filter { !$0.enter && $0.user.hasPrefix("crowd-") }
        func seconds(_ time: Int64?, after origin: Int64) -> Double? { time.map { Double($0 - origin) / 1000 } }
        crowd = Crowd(
            entersPublished: enters.count >= LoadScenario.crowdSize ? seconds(enters.map(\.received).max(), after: appeared) : nil,
            entersSpread: enters.count >= LoadScenario.crowdSize ? enters.map(\.received).min().flatMap { seconds(enters.map(\.received).max(), after: $0) } : nil,
            entersStored: seconds(stored?.allOpen, after: appeared),
            exitsPublished: exits.count >= LoadScenario.crowdSize ? seconds(exits.map(\.received).max(), after: due) : nil,
            exitsStored: seconds(stored?.allClosed, after: due))
    }

    static let header = """
        | scenario | offered /s | read | aggregator CPU | CPU-s per 1k | peak RSS | RSS at end | decision→publish p50 / worst p99 | first enters p50 / p95 / all | move p50 / max | crowd enters published / stored (first to last) | crowd exits published / stored | broker CPU | bench CPU, lag | stop | takeover |
        |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
        """

    var row: String {
        let devices = scenario.devices
        let entered = firstEnters.count
        let all = entered >= devices ? Self.format(firstEnters.last) : "\(entered)/\(devices)"
        let movesDone = moves.compactMap { $0 }.sorted()
        let missed = moves.count - movesDone.count
        let move = movesDone.isEmpty ? "none" : "\(Self.format(movesDone[movesDone.count / 2])) / \(Self.format(movesDone.last))\(missed > 0 ? " (\(missed) missed)" : "")"
        let crowdEnters = crowd.map { "\(Self.format($0.entersPublished)) / \(Self.format($0.entersStored)) (\(Self.format($0.entersSpread)))" } ?? "–"
        let crowdExits = crowd.map { "\(Self.format($0.exitsPublished)) / \(Self.format($0.exitsStored))" } ?? "–"
        return "| \(scenario.title) | \(Int(offered.rounded())) | \(readShare.isNaN ? "–" : String(format: "%.1f %%", readShare * 100)) | "
            + "\(String(format: "%.0f %%", cpuShare * 100)) | \(String(format: "%.4f", cpuPerThousand)) | \(String(format: "%.0f MiB", peakMiB)) | \(String(format: "%.0f MiB", residentAtEndMiB)) | "
            + "\(String(format: "%.0f", latencyP50)) / \(latencyP99) ms | "
            + "\(Self.format(Self.percentile(firstEnters, 0.5))) / \(Self.format(Self.percentile(firstEnters, 0.95))) / \(all) | \(move) | "
            + "\(crowdEnters) | \(crowdExits) | \(String(format: "%.0f %%", brokerCPUShare * 100)) | "
            + "\(String(format: "%.0f %%", benchCPUShare * 100)), \(generatorLag) ms | \(stopSeconds.map { String(format: "%.1f s", $0) } ?? "killed after 60 s") | \(takeoverSeconds.map { String(format: "%.1f s", $0) } ?? "–") |"
    }

    static func percentile(_ sorted: [Double], _ fraction: Double) -> Double? {
        sorted.isEmpty ? nil : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }

    static func format(_ seconds: Double?) -> String {
        seconds.map { String(format: "%.1f s", $0) } ?? "never"
    }
}
