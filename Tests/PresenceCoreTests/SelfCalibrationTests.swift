import Testing
@testable import PresenceCore

/// The pipeline's self-calibration from node beacons (`--self-calibrate`).
@Suite struct SelfCalibrationTests {
    static let start: Int64 = 1_763_774_700_000
    static let tag = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1"
    /// Nine nodes 6 m apart, each anchored to its booth; node-4 is registered with an offset (pinned).
    static let places = (0 ..< 9).map { (key: "node-\($0)", booth: "booth-\($0)", x: Double($0 % 3) * 6, y: Double($0 / 3) * 6) }

    static let registry = Registry(
        venues: [.init(key: "expo")],
        beacons: places.map { .init(key: $0.booth, venue: "expo", x: $0.x, y: $0.y) },
        nodes: places.map { .init(key: $0.key, venue: "expo", beacon: $0.booth, x: $0.x, y: $0.y, rssiOffset: $0.key == "node-4" ? 2 : 0, pinned: $0.key == "node-4") },
        users: [.init(key: "alice")],
        devices: [.init(identity: tag, user: "alice")])

    /// The same hall in the simulator: node gains uniform in ±4 dB, node beacons every second.
    static func simulator() throws -> VenueSimulator {
        var radio = Scenario.Radio()
        radio.nodeGainSigma = 0
        radio.nodeGainSpread = 4
        radio.shadowingSigma = 3
        radio.nodeBeaconInterval = 1_000
        let scenario = Scenario(venue: "expo", seed: 17, radio: radio, beacons: places.map { Scenario.Beacon(key: $0.booth, x: $0.x, y: $0.y) },
                                nodes: places.map { Scenario.Node(key: $0.key, x: $0.x, y: $0.y, beacon: $0.booth) }, people: [])
        return try VenueSimulator(scenario: scenario, start: start)
    }

    /// Five minutes of what the nodes hear of each other, as one batch per node per second.
    static func listen(_ pipeline: inout PresencePipeline, simulator: inout VenueSimulator) {
        var seq: Int64 = 0
        for second in 1 ... 300 {
            let time = start + Int64(second) * 1_000
            let heard = simulator.advance(to: time)
            seq += 1
            for place in places {
                let sightings = heard.filter { $0.node == place.key }.map(\.sighting)
                guard !sightings.isEmpty else { continue }
                _ = pipeline.receive(SightingBatch(node: place.key, seq: seq, sent: time, sightings: sightings).encoded(), node: Substring(place.key), at: time + 20)
            }
        }
    }

    @Test func nodeBeaconsGiveEachUnpinnedNodeItsOffset() throws {
        var configuration = PresencePipeline.Configuration()
        configuration.selfCalibrate = true
        var pipeline = PresencePipeline(configuration: configuration, registry: Self.registry, start: Self.start)
        var simulator = try Self.simulator()
        Self.listen(&pipeline, simulator: &simulator)
        let calibration = try #require(pipeline.selfCalibration)
        #expect(calibration.readings > 10_000)
        #expect(pipeline.counters.unmatched.isEmpty, "node beacons are calibration readings, not unregistered devices")
        let gains = Self.places.map { simulator.gain(of: $0.key) }
        let mean = gains.reduce(0, +) / Double(gains.count)
        #expect(calibration.applied["node-4"] == nil, "a node registered with its own offset is pinned")
        for (place, gain) in zip(Self.places, gains) where place.key != "node-4" {
            let offset = try #require(calibration.applied[place.key])
            #expect(abs(offset + (gain - mean)) < 1, "\(place.key): applied \(offset), true \(-(gain - mean))")
        }

        // A tag heard by node-0 is corrected by node-0's offset.
        let applied = try #require(calibration.applied["node-0"])
        var events: [PresenceEvent] = []
        for second in 301 ... 306 {
            let time = Self.start + Int64(second) * 1_000
            let batch = SightingBatch(node: "node-0", seq: Int64(second), sent: time, sightings: [Sighting(ts: time, id: Self.tag, rssi: -60, tx: -59)])
            events += pipeline.receive(batch.encoded(), node: "node-0", at: time + 20).events
        }
        let enter = try #require(events.first { $0.kind == .enter })
        #expect(enter.beacon == "booth-0")
        #expect(abs((enter.rssi ?? 0) - (-60 + applied)) < 0.01)
    }

    @Test func nodesOnTwoFloorsAreFittedAsTwoGroups() throws {
        var registry = Self.registry
        for place in Self.places { registry.nodes[place.key]?.floor = place.key < "node-5" ? 1 : 2 }
        var configuration = PresencePipeline.Configuration()
        configuration.selfCalibrate = true
        var pipeline = PresencePipeline(configuration: configuration, registry: registry, start: Self.start)
        var simulator = try Self.simulator()
        Self.listen(&pipeline, simulator: &simulator)
        let calibration = try #require(pipeline.selfCalibration)
        let fit = try #require(calibration.fit)
        #expect(fit.groups.map(\.area) == ["expo floor 1", "expo floor 2"])
        #expect(fit.groups.map(\.nodes.count) == [5, 4])
        #expect(fit.groups.map(\.links) == [20, 12], "no link across the floors, though the simulator's nodes hear each other")
        for floor in fit.groups {
            let fitted = floor.nodes.filter { calibration.applied[$0] != nil }
            let gains = fitted.map { simulator.gain(of: $0) }
            let mean = gains.reduce(0, +) / Double(gains.count)
            let offsets = fitted.compactMap { fit.offsets[$0] }
            let fittedMean = offsets.reduce(0, +) / Double(offsets.count)
            for (offset, gain) in zip(offsets, gains) {
                #expect(abs((offset - fittedMean) + (gain - mean)) < 1, "\(floor.area): fitted \(offset), gain \(gain)")
            }
        }
    }

    /// The RSSI of alice's enter when `node` hears her tag at -60 dBm for six seconds from `second`.
    static func enterRSSI(_ pipeline: inout PresencePipeline, node: String, from second: Int64) throws -> Double {
        var events: [PresenceEvent] = []
        for second in second ..< second + 6 {
            let time = start + second * 1_000
            let batch = SightingBatch(node: node, seq: second, sent: time, sightings: [Sighting(ts: time, id: tag, rssi: -60, tx: -59)])
            events += pipeline.receive(batch.encoded(), node: Substring(node), at: time + 20).events
        }
        return try #require(events.first { $0.kind == .enter }?.rssi)
    }

    static func selfCalibrating(_ registry: Registry = registry, stored: [String: Double] = [:]) -> PresencePipeline {
        var configuration = PresencePipeline.Configuration()
        configuration.selfCalibrate = true
        return PresencePipeline(configuration: configuration, registry: registry, start: start, storedOffsets: stored)
    }

    @Test func storedOffsetsApplyFromTheStartUntilAFitReplacesThem() throws {
        var pipeline = Self.selfCalibrating(stored: ["node-0": 2.5, "node-4": 9, "gone": 1])
        let seeded = try #require(pipeline.selfCalibration)
        #expect(seeded.applied == ["node-0": 2.5], "a pinned node keeps its own offset, an unregistered one has none")
        #expect(seeded.revision == 0, "seeding is not a fit to store")
        #expect(abs(try Self.enterRSSI(&pipeline, node: "node-0", from: 1) - -57.5) < 0.01)

        var simulator = try Self.simulator()
        Self.listen(&pipeline, simulator: &simulator)
        let fitted = try #require(pipeline.selfCalibration)
        #expect(fitted.revision > 0 && fitted.applied.count == 8 && fitted.applied["node-0"] != 2.5)
    }

    @Test func aRegistryChangeKeepsTheAppliedOffsetsAndAPinnedNodeKeepsZero() throws {
        var pipeline = Self.selfCalibrating()
        var simulator = try Self.simulator()
        Self.listen(&pipeline, simulator: &simulator)
        let before = try #require(pipeline.selfCalibration)
        var changed = Self.registry
        changed.users["bob"] = .init(key: "bob")
        changed.nodes["node-0"]?.pinned = true
        _ = pipeline.replaceRegistry(changed, at: Self.start + 301_000)
        let after = try #require(pipeline.selfCalibration)
        var expected = before.applied
        expected["node-0"] = nil
        #expect(after.applied == expected, "the fitted offsets carry over, but for the node now pinned")
        #expect(after.revision == before.revision && after.fit == before.fit && after.readings == 0)
        let applied = try #require(after.applied["node-1"])
        #expect(abs(try Self.enterRSSI(&pipeline, node: "node-1", from: 302) - (-60 + applied)) < 0.01, "applied at once, not after the next fit")
        #expect(try Self.enterRSSI(&pipeline, node: "node-0", from: 340) == -60, "pinned at 0 means 0")
    }

    @Test func aNodePinnedAtZeroIsNotFitted() throws {
        var registry = Self.registry
        registry.nodes["node-4"]?.rssiOffset = 0
        var pipeline = Self.selfCalibrating(registry)
        var simulator = try Self.simulator()
        Self.listen(&pipeline, simulator: &simulator)
        let calibration = try #require(pipeline.selfCalibration)
        #expect(calibration.applied.count == 8 && calibration.applied["node-4"] == nil)
        #expect(try Self.enterRSSI(&pipeline, node: "node-4", from: 301) == -60)
    }

    @Test func withoutTheFlagNodeBeaconsAreUnregisteredSightings() throws {
        var pipeline = PresencePipeline(configuration: PresencePipeline.Configuration(), registry: Self.registry, start: Self.start)
        var simulator = try Self.simulator()
        Self.listen(&pipeline, simulator: &simulator)
        #expect(pipeline.selfCalibration == nil)
        #expect((pipeline.counters.unmatched["unregistered"] ?? 0) > 10_000)
    }
}

/// The aggregator's core says when node offsets are fitted, and has them stored.
@Suite struct SelfCalibrationLogTests {
    @Test func theCoreLogsTheOffsetsWhenTheyAreFittedAndOnlyWhenTheyChange() throws {
        var configuration = AggregatorCore.Configuration()
        configuration.catchUp = false
        configuration.pipeline.selfCalibrate = true
        var core = AggregatorCore(configuration: configuration, registry: SelfCalibrationTests.registry, now: SelfCalibrationTests.start)
        _ = core.resume(at: SelfCalibrationTests.start)
        var simulator = try SelfCalibrationTests.simulator()
        var logs: [AggregatorCore.LogLine] = []
        var stored: [SelfCalibration.Summary] = []
        for second in 1 ... 300 {
            let time = SelfCalibrationTests.start + Int64(second) * 1_000
            let heard = simulator.advance(to: time)
            for place in SelfCalibrationTests.places {
                let sightings = heard.filter { $0.node == place.key }.map(\.sighting)
                guard !sightings.isEmpty else { continue }
                let payload = SightingBatch(node: place.key, seq: Int64(second), sent: time, sightings: sightings).encoded()
                let actions = AggregatorCoreTests.receive(&core, AggregatorCoreTests.topics.sightings(node: place.key), payload, at: time + 20)
                for case .log(let line) in actions where line.message == "node offsets fitted from node beacons" { logs.append(line) }
                for case .storeCalibration(let summary) in actions { stored.append(summary) }
            }
        }
        let first = try #require(logs.first)
        #expect(first.level == .notice)
        #expect(first.metadata["offsets_db"]?.contains("node-0 ") ?? false)
        #expect(!(first.metadata["offsets_db"]?.contains("node-4") ?? true), "the pinned node is not fitted")
        #expect(logs.count < 5, "logged when the offsets move, not at every fit: \(logs.count) lines in 5 minutes")
        #expect(stored.count == logs.count, "stored when logged")
        #expect(stored.last?.applied == core.pipeline.selfCalibration?.applied && stored.last?.applied.count == 8 && stored.last?.fittedAt != nil)
        let stats = try #require(core.statistics(at: SelfCalibrationTests.start + 301_000).calibration, "the stats carry the calibration")
        #expect(stats.applied.count == 8 && stats.readings > 10_000 && stats.fit != nil)
        #expect(AggregatorCoreTests.core().statistics(at: SelfCalibrationTests.start).calibration == nil, "not without --self-calibrate")
    }
}
