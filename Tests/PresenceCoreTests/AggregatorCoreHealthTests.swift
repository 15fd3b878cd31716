import Testing
@testable import PresenceCore

/// The core reports the fleet's health from what arrives: at the start, within one stats interval
/// of a change, and at least every health interval; never when health is not watched (replay).
@Suite struct AggregatorCoreHealthTests {
    static let start = AggregatorCoreTests.start
    static let topics = AggregatorCoreTests.topics

    static func core(health: FleetHealth.Configuration? = FleetHealth.Configuration()) -> AggregatorCore {
        AggregatorCoreTests.resumed({ $0.health = health }, registry: FleetHealthTests.registry)
    }

    static func reports(_ actions: [AggregatorCore.Action]) -> [FleetReport] {
        actions.compactMap { action in
            guard case .health(let report, _) = action else { return nil }
            return report
        }
    }

    /// Ticks every 100 ms over `from ..< to` (ms after the start), with `input` before each tick.
    static func run(_ core: inout AggregatorCore, from: Int64, to: Int64,
                    input: (inout AggregatorCore, Int64) -> [AggregatorCore.Action] = { _, _ in [] }) -> [AggregatorCore.Action] {
        var actions: [AggregatorCore.Action] = []
        for offset in stride(from: from, to: to, by: 100) {
            actions += input(&core, start + offset)
            actions += core.tick(at: start + offset)
        }
        return actions
    }

    @Test func theReportGoesOutAtTheStartOnAChangeWithinAStatsIntervalAndEveryIntervalAnyway() {
        var health = FleetHealth.Configuration()
        health.nodeDownAfter = 600_000
        var core = Self.core(health: health)
        let first = Self.reports(Self.run(&core, from: 100, to: 5_000))
        #expect(first.map(\.at) == [Self.start + 1_000])
        // node-a says offline at 5 s: reported once ten seconds have passed since the last report.
        var actions = Self.run(&core, from: 5_000, to: 60_000) { core, time in
            time == Self.start + 5_000 ? AggregatorCoreTests.receive(&core, Self.topics.nodeStatus(node: "node-a"), Array(#"{"v":1,"state":"offline"}"#.utf8), at: time) : []
        }
        #expect(Self.reports(actions).map(\.at) == [Self.start + 11_000])
        #expect(Self.reports(actions).first?.problems == [FleetReport.Problem(kind: .nodeDown, subject: .node("node-a"), state: .offline)])
        let logged = actions.compactMap { action -> AggregatorCore.LogLine? in
            guard case .log(let line) = action, line.message == "fleet health" else { return nil }
            return line
        }
        #expect(logged.map(\.metadata) == [["problems": "1", "low_battery": "0", "silent": "0", "node_down": "1", "node_skewed": "0"]])
        // Nothing changes: the next report a minute after the last.
        actions = Self.run(&core, from: 60_000, to: 75_000)
        #expect(Self.reports(actions).map(\.at) == [Self.start + 71_000])
    }

    @Test func telemetryAndStatsThatArriveReachTheReport() throws {
        var core = Self.core()
        let batch = SightingBatch(node: "node-a", seq: 1, sent: Self.start + 500, sightings: [
            Sighting(ts: Self.start + 450, id: FleetHealthTests.tag, rssi: -60, telemetry: Telemetry(batteryMillivolts: 2_380, temperature: 24)),
        ])
        _ = AggregatorCoreTests.receive(&core, Self.topics.sightings(node: "node-a"), batch.encoded(), at: Self.start + 500)
        let stats = NodeStatistics(node: "node-a", uptime: 10_000, reportsPerSecond: 37.5, sightings: 1)
        _ = AggregatorCoreTests.receive(&core, Self.topics.nodeStats(node: "node-a"), stats.encoded(), at: Self.start + 600)
        let report = try #require(Self.reports(Self.run(&core, from: 700, to: 1_100)).first)
        #expect(report.problems == [FleetReport.Problem(kind: .lowBattery, subject: .tag(FleetHealthTests.tag), batteryMillivolts: 2_380)])
        #expect(report.tags.first?.radio.temperature == 24)
        #expect(report.nodes.first { $0.key == "node-a" }?.reportsPerSecond == 37.5)
        #expect(report.nodes.first { $0.key == "node-a" }?.lastBatch == Self.start + 500)
    }

    @Test func withoutHealthNothingIsReported() {
        var core = Self.core(health: nil)
        #expect(Self.reports(Self.run(&core, from: 100, to: 130_000)).isEmpty)
        #expect(core.pipeline.fleet == nil)
    }
}
