import Foundation
import Testing
@testable import PresenceCore

/// The fleet's health: low batteries from TLM, silent beacons and tags, nodes down or skewed,
/// only for registered things, with the thresholds given.
@Suite struct FleetHealthTests {
    static let start: Int64 = 1_763_774_700_000
    static let tag = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:1"
    static let beaconID = "eddystone:edd1ebeac04e5defa017:0123456789ab"
    static let scanner = "node:badge-1"

    static let registry = Registry(
        venues: [.init(key: "expo")],
        beacons: [.init(key: "booth-a", venue: "expo", identity: beaconID), .init(key: "booth-b", venue: "expo"),
                  .init(key: "hall", venue: "expo", identity: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:9")],
        nodes: [.init(key: "node-a", beacon: "booth-a"), .init(key: "node-b", beacon: "booth-b")],
        users: [.init(key: "alice"), .init(key: "bob")],
        devices: [.init(identity: tag, user: "alice"), .init(identity: scanner, user: "bob")])

    static func health(_ configure: (inout FleetHealth.Configuration) -> Void = { _ in }, registry: Registry = registry) -> FleetHealth {
        var configuration = FleetHealth.Configuration()
        configure(&configuration)
        return FleetHealth(configuration: configuration, registry: registry, start: start)
    }

    static func problems(_ health: FleetHealth, at time: Int64) -> [String] {
        health.report(at: time).problems.map { problem in
            let subject = problem.subject.member
            return "\(problem.kind.rawValue) \(subject.name) \(subject.value)"
        }
    }

    static func battery(_ millivolts: Int) -> Telemetry {
        Telemetry(batteryMillivolts: millivolts, temperature: 21.5, advertisementCount: 100, uptime: 3_600)
    }

    @Test func aLowBatteryIsReportedUntilAReadingIsClearlyAboveTheThreshold() {
        var health = Self.health()
        health.heard(Self.tag, at: Self.start + 1_000, telemetry: Self.battery(2_900))
        #expect(Self.problems(health, at: Self.start + 2_000).isEmpty)
        health.heard(Self.tag, at: Self.start + 3_000, telemetry: Self.battery(2_410))
        let report = health.report(at: Self.start + 4_000)
        #expect(report.problems == [FleetReport.Problem(kind: .lowBattery, subject: .tag(Self.tag), batteryMillivolts: 2_410)])
        #expect(report.tags == [FleetReport.Tag(identity: Self.tag, radio: FleetReport.Radio(lastHeard: Self.start + 3_000, batteryMillivolts: 2_410,
                                                                                                 batteryAt: Self.start + 3_000, temperature: 21.5, uptime: 3_600))])
        // A reading that wavers just above the threshold keeps the problem; a new battery ends it.
        health.heard(Self.tag, at: Self.start + 5_000, telemetry: Self.battery(2_540))
        #expect(Self.problems(health, at: Self.start + 6_000) == ["low_battery tag \(Self.tag)"])
        health.heard(Self.tag, at: Self.start + 7_000, telemetry: Self.battery(3_050))
        #expect(Self.problems(health, at: Self.start + 8_000).isEmpty)
        // A sighting without telemetry keeps the last reading; an older one does not replace it.
        health.heard(Self.tag, at: Self.start + 9_000, telemetry: nil)
        health.heard(Self.tag, at: Self.start + 6_500, telemetry: Self.battery(2_000))
        #expect(health.report(at: Self.start + 10_000).tags.first?.radio.batteryMillivolts == 3_050)
        #expect(health.report(at: Self.start + 10_000).tags.first?.radio.lastHeard == Self.start + 9_000)
    }

    @Test func aBeaconNeverHeardIsSilentOnceTheThresholdHasPassedSinceTheStartAndOneHeardAgainIsNot() {
        var health = Self.health {
            $0.silentAfter = 60_000
            $0.nodeDownAfter = 3_600_000
        }
        #expect(Self.problems(health, at: Self.start + 60_000).isEmpty, "not before the threshold")
        let never = health.report(at: Self.start + 60_001)
        #expect(never.problems == [FleetReport.Problem(kind: .silent, subject: .beacon("booth-a"))])
        health.heard(Self.beaconID, at: Self.start + 70_000, telemetry: nil)
        #expect(Self.problems(health, at: Self.start + 71_000).isEmpty)
        #expect(health.report(at: Self.start + 130_001).problems == [FleetReport.Problem(kind: .silent, subject: .beacon("booth-a"), lastHeard: Self.start + 70_000)])
        health.heard(Self.beaconID, at: Self.start + 131_000, telemetry: nil)
        #expect(Self.problems(health, at: Self.start + 132_000).isEmpty, "back again")
        // Only beacons with an identity of one radio are watched: booth-b has none, hall is a region.
        #expect(never.beacons.map(\.key) == ["booth-a"])
    }

    @Test func aTagIsSilentOnlyOnceHeardSinceTheStart() {
        var health = Self.health { $0.silentAfter = 60_000 }
        #expect(!Self.problems(health, at: Self.start + 3_600_000).contains { $0.contains("tag") }, "a tag nobody brought is not silent")
        health.heard(Self.tag, at: Self.start + 3_600_000, telemetry: nil)
        #expect(!Self.problems(health, at: Self.start + 3_660_000).contains { $0.contains("tag") })
        #expect(Self.problems(health, at: Self.start + 3_660_001).contains("silent tag \(Self.tag)"))
    }

    @Test func aNodeIsDownWhenItsStatusSaysOfflineOrNothingCameForTooLongAndBackWhenItSpeaks() {
        var health = Self.health { $0.nodeDownAfter = 30_000 }
        health.status(of: "node-a", online: true, at: Self.start + 100)
        health.stats(from: "node-b", at: Self.start + 200, reportsPerSecond: 42.5)
        #expect(health.report(at: Self.start + 1_000).nodes.map(\.state) == [.unknown, .online, .online], "badge-1 not heard yet")
        #expect(Self.problems(health, at: Self.start + 1_000).isEmpty)

        health.status(of: "node-a", online: false, at: Self.start + 2_000)
        let offline = health.report(at: Self.start + 3_000)
        #expect(offline.problems == [FleetReport.Problem(kind: .nodeDown, subject: .node("node-a"), lastHeard: Self.start + 100, state: .offline)])
        health.status(of: "node-a", online: true, at: Self.start + 4_000)
        #expect(Self.problems(health, at: Self.start + 5_000).isEmpty)

        // node-b's stats stop: down once the threshold has passed. badge-1 is carried: never down.
        health.status(of: "node-a", online: true, at: Self.start + 31_000)
        let quiet = health.report(at: Self.start + 30_201)
        #expect(quiet.problems == [FleetReport.Problem(kind: .nodeDown, subject: .node("node-b"), lastHeard: Self.start + 200, state: .silent)])
        #expect(quiet.nodes.first { $0.key == "badge-1" }?.state == .silent)
        #expect(quiet.nodes.first { $0.key == "badge-1" }?.carried == true)
        #expect(quiet.nodes.first { $0.key == "node-b" }?.reportsPerSecond == 42.5)
        health.batch(from: "node-b", at: Self.start + 40_000, sightings: 3, clockOffset: 5)
        #expect(Self.problems(health, at: Self.start + 41_000).isEmpty)
    }

    @Test func aNodeWhoseClockIsOffByMoreThanTheThresholdIsSkewedAsItsBatchesSay() {
        var pipeline = PresencePipeline(configuration: .init(), registry: Self.registry, start: Self.start)
        pipeline.watchHealth(FleetHealth.Configuration(), since: Self.start)
        for i in 0 ..< 5 {
            let arrival = Self.start + Int64(i) * 1_000
            // node-a's clock runs 5 s fast, node-b's 1.5 s slow (within the default 2 s).
            _ = pipeline.receive(PresencePipelineTests.batch("node-a", seq: Int64(i), at: arrival, rssi: -60, sent: arrival + 5_000), node: "node-a", at: arrival)
            _ = pipeline.receive(PresencePipelineTests.batch("node-b", seq: Int64(i), at: arrival, rssi: -60, sent: arrival - 1_500), node: "node-b", at: arrival)
        }
        let report = pipeline.fleet?.report(at: Self.start + 5_000)
        #expect(report?.nodes.map(\.skew) == [nil, 5_000, -1_500])
        #expect(report?.problems == [FleetReport.Problem(kind: .nodeSkewed, subject: .node("node-a"), skew: 5_000)])
        var strict = PresencePipeline(configuration: .init(), registry: Self.registry, start: Self.start)
        var configuration = FleetHealth.Configuration()
        configuration.maxSkew = 1_000
        strict.watchHealth(configuration, since: Self.start)
        _ = strict.receive(PresencePipelineTests.batch("node-b", seq: 1, at: Self.start, rssi: -60, sent: Self.start - 1_500), node: "node-b", at: Self.start)
        #expect(strict.fleet.map { Self.problems($0, at: Self.start + 1_000) } == ["node_skewed node node-b"])
    }

    @Test func unregisteredIdentitiesAndNodesAreNeverKeptAndWhatTheRegistryDropsIsForgotten() {
        var health = Self.health()
        let stranger = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:99"
        health.heard(stranger, at: Self.start + 1_000, telemetry: Self.battery(2_000))
        health.heard("mac:c4:7c:8d:6a:2b:01", at: Self.start + 1_000, telemetry: Self.battery(2_000))
        health.stats(from: "node-x", at: Self.start + 1_000, reportsPerSecond: 3)
        health.batch(from: "node-x", at: Self.start + 1_000, sightings: 3, clockOffset: 10_000)
        health.heard(Self.tag, at: Self.start + 1_000, telemetry: Self.battery(2_000))
        #expect(health.radios.map(\.identity) == [Self.beaconID, Self.tag])
        #expect(health.nodes.keys.sorted() == ["badge-1", "node-a", "node-b"])
        let report = health.report(at: Self.start + 2_000)
        #expect(!String(decoding: report.encoded(), as: UTF8.self).contains(":99"))
        #expect(Self.problems(health, at: Self.start + 2_000) == ["low_battery tag \(Self.tag)"])

        // alice's tag and node-b leave the registry: forgotten; registered again, they start afresh.
        var smaller = Self.registry
        smaller.devices[Self.tag] = nil
        smaller.nodes["node-b"] = nil
        health.replaceRegistry(smaller, at: Self.start + 3_000)
        #expect(health.report(at: Self.start + 4_000).tags.isEmpty)
        #expect(health.nodes.keys.sorted() == ["badge-1", "node-a"])
        health.replaceRegistry(Self.registry, at: Self.start + 5_000)
        #expect(health.report(at: Self.start + 6_000).tags == [FleetReport.Tag(identity: Self.tag)])
        #expect(Self.problems(health, at: Self.start + 6_000).isEmpty)
    }

    @Test func aTagOfAnIncognitoUserIsNeitherTakenNorReported() {
        var registry = Self.registry
        registry.users["alice"]?.incognitoUntil = Self.start + 10_000
        registry.users["bob"]?.incognitoUntil = Self.start + 10_000
        var health = Self.health(registry: registry)
        health.heard(Self.tag, at: Self.start + 1_000, telemetry: Self.battery(2_000))
        health.batch(from: "badge-1", at: Self.start + 1_000, sightings: 3, clockOffset: 0)
        let during = health.report(at: Self.start + 2_000)
        #expect(during.tags.isEmpty && during.problems.isEmpty)
        #expect(during.nodes.map(\.key) == ["node-a", "node-b"], "bob's scanner is not listed while he is incognito")
        let after = health.report(at: Self.start + 10_000)
        #expect(after.tags == [FleetReport.Tag(identity: Self.tag)], "nothing was taken while she was incognito")
        #expect(after.nodes.first { $0.key == "badge-1" }?.lastHeard == nil)
    }

    static let thresholdCases: [(lowBattery: Int, millivolts: Int, low: Bool)] = [
        (2_500, 2_499, true), (2_500, 2_500, false), (3_300, 3_000, true), (2_000, 2_100, false),
    ]

    @Test(arguments: thresholdCases)
    func theBatteryThresholdDecides(_ threshold: (lowBattery: Int, millivolts: Int, low: Bool)) {
        var health = Self.health { $0.lowBattery = threshold.lowBattery }
        health.heard(Self.beaconID, at: Self.start + 1_000, telemetry: Self.battery(threshold.millivolts))
        #expect(Self.problems(health, at: Self.start + 2_000) == (threshold.low ? ["low_battery beacon booth-a"] : []))
    }

    @Test func sightingsPerSecondAreCountedOverTheWindowAndFallToZeroWhenBatchesStop() {
        var health = Self.health { $0.rateWindow = 10_000 }
        health.batch(from: "node-b", at: Self.start - 1_000, sightings: 5, clockOffset: nil)
        #expect(health.report(at: Self.start - 500).nodes.first { $0.key == "node-b" }?.sightingsPerSecond == 0, "not over a second yet")
        #expect(health.report(at: Self.start).nodes.first { $0.key == "node-b" }?.sightingsPerSecond == 5, "the window so far")
        for i in 0 ... 10 {
            health.batch(from: "node-a", at: Self.start + Int64(i) * 1_000, sightings: 20, clockOffset: nil)
        }
        #expect(health.report(at: Self.start + 10_500).nodes.first { $0.key == "node-a" }?.sightingsPerSecond == 20)
        #expect(health.report(at: Self.start + 30_001).nodes.first { $0.key == "node-a" }?.sightingsPerSecond == 0)
    }

    @Test func theReportEncodesAsPublishedAndDecodesToItself() throws {
        var health = Self.health {
            $0.silentAfter = 60_000
            $0.nodeDownAfter = 120_000
        }
        health.heard(Self.tag, at: Self.start + 1_000, telemetry: Self.battery(2_410))
        health.status(of: "node-a", online: false, at: Self.start + 1_000)
        health.batch(from: "node-b", at: Self.start + 1_000, sightings: 10, clockOffset: -4_000)
        let report = health.report(at: Self.start + 62_000)
        let text = String(decoding: report.encoded(), as: UTF8.self)
        #expect(text.hasPrefix(#"{"v":1,"at":1763774762000,"thresholds":{"low_battery_mv":2500,"silent_after_ms":60000,"node_down_after_ms":120000,"max_skew_ms":2000,"interval_ms":60000},"problems":[{"kind":"low_battery","tag":"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:1","battery_mv":2410},{"kind":"silent","beacon":"booth-a"},{"kind":"silent","tag":"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:1","last_heard":1763774701000},{"kind":"node_down","node":"node-a","state":"offline"},{"kind":"node_skewed","node":"node-b","skew_ms":4000}]"#),
                "\(text)")
        #expect(text.contains(#"{"node":"node-b","state":"online","carried":false,"last_heard":1763774701000,"last_batch":1763774701000,"sightings_per_s":0,"skew_ms":4000}"#))
        #expect(!text.contains("alice"), "tags are named by identity, never by user")
        #expect(try JSONDecoder().decode(FleetReport.self, from: Data(report.encoded())) == report)
    }

    @Test func forgettingAUsersDevicesTakesTheirTagsNodesAndProblemsOut() throws {
        var health = Self.health { $0.nodeDownAfter = 1_000 }
        health.heard(Self.tag, at: Self.start + 1_000, telemetry: Self.battery(2_000))
        let report = health.report(at: Self.start + 5_000)
        #expect(report.problems.map(\.subject).contains(.tag(Self.tag)))
        #expect(report.nodes.map(\.key).contains("badge-1"))
        let forgotten = try #require(report.forgetting([Self.tag, Self.scanner]))
        #expect(forgotten.tags.isEmpty)
        #expect(forgotten.nodes.map(\.key) == ["node-a", "node-b"])
        #expect(forgotten.problems == report.problems.filter { $0.subject != .tag(Self.tag) }, "the nodes' problems stay")
        #expect(forgotten.problems.contains { $0.subject == .node("node-b") })
        #expect(!String(decoding: forgotten.encoded(), as: UTF8.self).contains("7:1"))
        #expect(report.forgetting(["ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:2"]) == nil, "nothing to rewrite")
    }

    /// A scanned identity as the pipeline hands it over: the matcher's device number, else its bytes.
    static func heard(_ health: inout FleetHealth, _ identity: String, registry: Registry, at time: Int64) {
        let payload = Array(identity.utf8)
        let matcher = ObservationMatcher(registry: registry)
        payload.withUnsafeBytes { bytes in
            let span = TextSpan.bytes(0 ..< bytes.count)
            health.heard(device: matcher.device(span, in: bytes), span, in: bytes, at: time, telemetry: nil)
        }
    }

    @Test func aTagIsFoundByTheMatchersDeviceNumberAndABeaconByItsBytesAcrossRegistrySwaps() throws {
        var health = Self.health()
        Self.heard(&health, Self.tag, registry: Self.registry, at: Self.start + 1_000)
        Self.heard(&health, Self.beaconID, registry: Self.registry, at: Self.start + 2_000)
        Self.heard(&health, Self.scanner, registry: Self.registry, at: Self.start + 3_000)
        var report = health.report(at: Self.start + 4_000)
        #expect(report.tags.map { "\($0.identity) \($0.radio.lastHeard ?? 0)" } == ["\(Self.tag) \(Self.start + 1_000)"])
        #expect(report.beacons.first { $0.key == "booth-a" }?.radio.lastHeard == Self.start + 2_000)
        // Devices whose identities sort before the tag's renumber it: the new numbers still find it.
        var more = Self.registry
        for identity in ["eddystone:00000000000000000000:000000000001", "ibeacon:00000000-0000-0000-0000-000000000000:1:1"] {
            more.devices[identity] = .init(identity: identity, user: "bob")
        }
        health.replaceRegistry(more, at: Self.start + 5_000)
        Self.heard(&health, Self.tag, registry: more, at: Self.start + 6_000)
        Self.heard(&health, "ibeacon:00000000-0000-0000-0000-000000000000:1:1", registry: more, at: Self.start + 7_000)
        report = health.report(at: Self.start + 8_000)
        #expect(report.tags.map { "\($0.identity) \($0.radio.lastHeard ?? 0)" }.sorted() == [
            "eddystone:00000000000000000000:000000000001 0", "ibeacon:00000000-0000-0000-0000-000000000000:1:1 \(Self.start + 7_000)",
            "\(Self.tag) \(Self.start + 6_000)",
        ])
        #expect(health.radio(for: Self.beaconID) != nil && health.radio(for: "mac:00:00:00:00:00:00") == nil)
    }
}
