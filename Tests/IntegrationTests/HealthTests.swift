import Foundation
import PresenceCore
import PresenceMQTT
import Synchronization
import Testing

extension EndToEndTests {
    /// The fleet's health end to end: the real aggregator reads the TLM its nodes forward and their
    /// status, publishes `{p}/v1/health`, and `presencectl health` shows a beacon that stops sending,
    /// a tag whose battery drops and a node that goes offline, and their recovery.
    /// Among the end-to-end tests, which run alone: it publishes in real time against deadlines.
    @Suite struct HealthTests {
        static let beaconID = "eddystone:edd1ebeac04e5defa017:0123456789ab"
        static let tag = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:1"

        /// What scan-1 hears in each phase.
        struct Hearing: Sendable {
            var beacon: Bool
            var tagBattery: Int
        }

        /// The phase, changed by the test while `hear` publishes.
        final class Phase: Sendable {
            private let hearing: Mutex<Hearing>
            init(_ hearing: Hearing) { self.hearing = Mutex(hearing) }
            var now: Hearing { hearing.withLock { $0 } }
            func set(_ new: Hearing) { hearing.withLock { $0 = new } }
        }

        /// Publishes what scan-1 hears every 300 ms (the beacon's TLM at 3000 mV, the tag's as
        /// `hearing` says) until cancelled.
        static func hear(_ publisher: MQTTClient, _ h: PipelineHarness, _ phase: Phase) -> Task<Void, any Error> {
            Task {
                var seq: Int64 = 0
                while !Task.isCancelled {
                    seq += 1
                    let now = nowMilliseconds()
                    let hearing = phase.now
                    var sightings = [Sighting(ts: now, id: tag, rssi: -60, tx: -59, telemetry: Telemetry(batteryMillivolts: hearing.tagBattery, temperature: 23.5))]
                    if hearing.beacon {
                        sightings.append(Sighting(ts: now, id: beaconID, rssi: -70, tx: -59, telemetry: Telemetry(batteryMillivolts: 3_000, uptime: 86_400)))
                    }
                    try await publisher.publish(SightingBatch(node: "scan-1", seq: seq, sent: now, sightings: sightings), topics: h.topics)
                    try await Task.sleep(for: .milliseconds(300))
                }
            }
        }

        /// Runs `presencectl health ARGUMENTS` until `condition` holds on its result (or the deadline passes).
        static func health(_ h: PipelineHarness, _ arguments: [String] = [], within seconds: Double, until condition: (CommandResult) -> Bool) async throws -> CommandResult {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while true {
                let result = try h.ctl(["health"] + arguments)
                if condition(result) || ContinuousClock.now >= deadline { return result }
                try await Task.sleep(for: .milliseconds(500))
            }
        }

        @Test func aBeaconThatStopsATagWhoseBatteryDropsAndAnOfflineNodeShowUpInHealthAndGoAgain() async throws {
            let h = try PipelineHarness("health")
            try h.ctlOK("migrate")
            try h.ctlOK("venue", "add", "lab")
            try h.ctlOK("beacon", "add", "desk-1", "--venue", "lab", "--id", Self.beaconID)
            try h.ctlOK("beacon", "add", "desk-2", "--venue", "lab")
            try h.ctlOK("node", "add", "scan-1", "--venue", "lab", "--beacon", "desk-2")
            try h.ctlOK("node", "add", "scan-2", "--venue", "lab", "--beacon", "desk-1")
            try h.ctlOK("user", "add", "alice")
            try h.ctlOK("device", "add", Self.tag, "--user", "alice")

            let none = try h.ctl("health", "--for", "1s")
            #expect(none.status != 0 && none.stderr.contains("no health report on \(h.topics.health) within 1s"), "\(none.stderr)")

            let bus = try await h.recorder()
            let aggregator = try h.startAggregator(["--silent-after", "3s", "--node-down-after", "20s", "--health-interval", "5s", "--low-battery", "2.5V"])
            try await bus.wait(20, for: "the aggregator's online status") { messages in
                messages.contains { $0.topic == h.topics.aggregatorStatus && $0.text.contains("\"online\"") }
            }
            let publisher = try await h.publisher()
            try await publisher.publish(MQTTMessage(topic: h.topics.nodeStatus(node: "scan-2"), payload: Array(#"{"v":1,"state":"offline"}"#.utf8), qos: 1, retain: true))
            let phase = Phase(Hearing(beacon: true, tagBattery: 2_900))
            let scan1 = Self.hear(publisher, h, phase)
            defer { scan1.cancel() }

            // Everything heard: only scan-2, offline, is a problem; --check says so with status 1.
            let first = try await Self.health(h, ["--check"], within: 30) { $0.stdout.contains("1 problem:") && $0.stdout.contains("2900 mV") }
            #expect(first.status == 1 && first.stderr.contains("1 problem"), "\(first.stderr)")
            #expect(first.stdout.contains("  node down  node scan-2  offline, never heard"), "\(first.stdout)")
            #expect(first.stdout.contains("desk-1  \(Self.beaconID)"), "\(first.stdout)")
            #expect(first.stdout.contains("3000 mV") && first.stdout.contains("23.5 °C") && first.stdout.contains("24h"), "\(first.stdout)")
            #expect(!first.stdout.contains("alice"), "health names tags by identity, never by user")
            #expect(try h.ctl("health").status == 0, "without --check, problems are listed and the status is 0")

            // The beacon stops sending and the tag's battery drops.
            phase.set(Hearing(beacon: false, tagBattery: 2_300))
            let failing = try await Self.health(h, within: 30) { $0.stdout.contains("silent  beacon desk-1") && $0.stdout.contains("low battery  tag") }
            #expect(failing.status == 0)
            let problems = failing.stdout.split(separator: "\n").filter { $0.hasPrefix("  ") }.map(String.init)
            #expect(problems.count == 3, "\(failing.stdout)")
            #expect(problems.first == "  low battery  tag \(Self.tag)  2300 mV", "\(failing.stdout)")
            #expect(problems.contains { $0.hasPrefix("  silent  beacon desk-1  last heard ") }, "\(failing.stdout)")
            let json = try h.ctl("health", "--json")
            let report = try JSONDecoder().decode(FleetReport.self, from: Data(json.stdout.utf8))
            #expect(Set(report.problems.map(\.kind)) == [.lowBattery, .silent, .nodeDown])
            #expect(report.thresholds == FleetReport.Thresholds(lowBattery: 2_500, silentAfter: 3_000, nodeDownAfter: 20_000, maxSkew: 2_000, interval: 5_000))

            // A new battery, the beacon back, scan-2 online: no problem, and --check says 0.
            phase.set(Hearing(beacon: true, tagBattery: 3_100))
            try await publisher.publish(MQTTMessage(topic: h.topics.nodeStatus(node: "scan-2"), payload: Array(#"{"v":1,"state":"online"}"#.utf8), qos: 1, retain: true))
            let healthy = try await Self.health(h, ["--check"], within: 30) { $0.status == 0 }
            #expect(healthy.status == 0 && healthy.stdout.contains("no problems"), "\(healthy.stdout) \(healthy.stderr)")

            scan1.cancel()
            await publisher.stop()
            #expect(await aggregator.stop() == 0)
            await bus.stop()
            let published = bus.messages(on: h.topics.health)
            #expect(published.count >= 3, "presencectl read them retained")
            let validation = try await AggregatorStatsSchemaTests.validate(published.map(\.text), topic: h.topics.health)
            #expect(validation.status == 0 && validation.output.contains("health=\(published.count)"), "\(validation.output)")
        }

        @Test func everyKindOfProblemMatchesTheSchemaAndTheSchemaChecksIt() async throws {
            let start: Int64 = 1_763_774_700_000
            let report = FleetReport(
                at: start + 60_000, thresholds: FleetReport.Thresholds(lowBattery: 2_500, silentAfter: 600_000, nodeDownAfter: 60_000, maxSkew: 2_000, interval: 60_000),
                problems: [
                    .init(kind: .lowBattery, subject: .tag(Self.tag), batteryMillivolts: 2_410),
                    .init(kind: .silent, subject: .beacon("desk-1"), lastHeard: start),
                    .init(kind: .silent, subject: .tag(Self.tag)),
                    .init(kind: .nodeDown, subject: .node("scan-2"), state: .offline),
                    .init(kind: .nodeSkewed, subject: .node("scan-1"), skew: -5_000),
                ],
                beacons: [.init(key: "desk-1", identity: Self.beaconID, radio: .init(lastHeard: start, batteryMillivolts: 3_000, batteryAt: start, temperature: -3.5, uptime: 12.5))],
                tags: [.init(identity: Self.tag), .init(identity: "mac:c4:7c:8d:6a:2b:01", radio: .init(lastHeard: start + 1))],
                nodes: [.init(key: "badge-1", state: .unknown, carried: true),
                        .init(key: "scan-1", state: .online, lastHeard: start, lastBatch: start, sightingsPerSecond: 12.5, reportsPerSecond: 40, skew: -5_000),
                        .init(key: "scan-2", state: .offline)])
            let text = String(decoding: report.encoded(), as: UTF8.self)
            let valid = try await AggregatorStatsSchemaTests.validate([text, String(decoding: FleetReport(at: start, thresholds: report.thresholds).encoded(), as: UTF8.self)],
                                                                topic: "p/v1/health")
            #expect(valid.status == 0 && valid.output.contains("health=2"), "\(valid.output)")
            for broken in [
                text.replacingOccurrences(of: #""battery_mv":2410"#, with: #""battery_at":1"#),
                text.replacingOccurrences(of: #""kind":"node_skewed","node""#, with: #""kind":"node_skewed","beacon""#),
                text.replacingOccurrences(of: #""state":"unknown""#, with: #""state":"asleep""#),
            ] {
                #expect(broken != text)
                let refused = try await AggregatorStatsSchemaTests.validate([broken], topic: "p/v1/health")
                #expect(refused.status == 1, "\(broken) was accepted: \(refused.output)")
            }
        }
    }
}
