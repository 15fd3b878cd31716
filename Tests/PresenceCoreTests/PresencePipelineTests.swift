import Testing
@testable import PresenceCore

@Suite struct PresencePipelineTests {
    static let tag = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1"
    static let registry = Registry(
        venues: [.init(key: "expo")],
        beacons: [.init(key: "a", venue: "expo"), .init(key: "b", venue: "expo")],
        nodes: [.init(key: "node-a", beacon: "a"), .init(key: "node-b", beacon: "b")],
        users: [.init(key: "alice")],
        devices: [.init(identity: tag, user: "alice")])

    static func batch(_ node: String, seq: Int64, at time: Int64, rssi: Int, sent: Int64? = nil) -> [UInt8] {
        SightingBatch(node: node, seq: seq, sent: sent ?? time, sightings: [Sighting(ts: time, id: tag, rssi: rssi, tx: -59)]).encoded()
    }

    /// Arrivals of a walk from a to b and away, with some jitter, as (node, payload, received).
    static func walk(seed: UInt64, start: Int64) -> [(String, [UInt8], Int64)] {
        var random = RandomSource(seed: seed)
        var arrivals: [(String, [UInt8], Int64)] = []
        var seq: Int64 = 0
        for t in stride(from: start, to: start + 40_000, by: 700) {
            seq += 1
            let atA = t < start + 20_000
            for node in ["node-a", "node-b"] where random.uniform() > 0.2 {
                let near = (node == "node-a") == atA
                let rssi = (near ? -58 : -74) + Int(random.gaussian() * 3)
                arrivals.append((node, batch(node, seq: seq, at: t, rssi: rssi), t + Int64(random.uniform() * 300)))
            }
        }
        return arrivals.sorted { $0.2 < $1.2 }
    }

    @Test func theRegistrysPlacePoliciesDecide() {
        let start: Int64 = 1_763_774_700_000
        func moves(_ registry: Registry) -> [String] {
            var pipeline = PresencePipeline(configuration: .init(), registry: registry, start: start)
            var events: [PresenceEvent] = []
            for (node, payload, received) in Self.walk(seed: 9, start: start) {
                events += pipeline.receive(payload, node: Substring(node), at: received).events
            }
            events += pipeline.advanceClock(to: start + 120_000)
            return events.filter { $0.kind == .enter }.map(\.beacon)
        }
        #expect(moves(Self.registry) == ["a", "b"])
        var sticky = Self.registry
        sticky.beacons["a"]?.switchMargin = 30
        #expect(moves(sticky) == ["a"], "a 16 dB lead does not take alice from a beacon that asks for 30")
        var pipeline = PresencePipeline(configuration: .init(), registry: Self.registry, start: start)
        #expect(pipeline.engine.places.isEmpty)
        _ = pipeline.replaceRegistry(sticky, at: start + 1_000)
        #expect(pipeline.engine.places == PlacePolicies(registry: sticky))
    }

    @Test func skippingQuietTicksDecidesExactlyAsDecidingAtEveryTick() {
        let start: Int64 = 1_763_774_700_000
        let arrivals = Self.walk(seed: 9, start: start)
        var pipeline = PresencePipeline(configuration: .init(), registry: Self.registry, start: start)
        var viaPipeline: [PresenceEvent] = []
        for (node, payload, received) in arrivals {
            viaPipeline += pipeline.receive(payload, node: Substring(node), at: received).events
        }
        viaPipeline += pipeline.advanceClock(to: start + 120_000)

        // The same arrivals, with the engine advanced at every single tick.
        let configuration = PresencePipeline.Configuration()
        var engine = PresenceEngine(configuration: configuration.engine, now: start - configuration.lateness)
        var matcher = ObservationMatcher(registry: Self.registry)
        var viaEveryTick: [PresenceEvent] = []
        var tick = (start / 100 + 1) * 100
        func run(to time: Int64) {
            while tick <= time {
                viaEveryTick += engine.advance(to: tick - configuration.lateness)
                tick += 100
            }
        }
        for (node, payload, received) in arrivals {
            run(to: received)
            if case .success(let decoded) = SightingBatchDecoder.decode(payload, topicNode: node) {
                for sighting in decoded.batch.sightings {
                    if case .success(let observation) = matcher.match(sighting, node: node, time: min(sighting.ts, received)) {
                        engine.ingest(observation)
                    }
                }
            }
        }
        run(to: start + 120_000)
        #expect(viaPipeline.map(\.kind) == [.enter, .exit, .enter, .exit])
        #expect(viaPipeline == viaEveryTick)
    }

    @Test func theSameArrivalsGiveTheSameEventsEveryTime() {
        func run() -> [PresenceEvent] {
            let start: Int64 = 1_763_774_700_000
            var pipeline = PresencePipeline(configuration: .init(), registry: Self.registry, start: start)
            var events: [PresenceEvent] = []
            for (node, payload, received) in Self.walk(seed: 4, start: start) {
                events += pipeline.receive(payload, node: Substring(node), at: received).events
            }
            return events + pipeline.advanceClock(to: start + 100_000)
        }
        #expect(run() == run())
    }

    @Test func countsRejectedBatchesDroppedSightingsAndUnmatchedOnes() {
        var pipeline = PresencePipeline(configuration: .init(), registry: Self.registry, start: 1_763_774_700_000)
        _ = pipeline.receive(Array("garbage".utf8), node: "node-a", at: 1_763_774_700_100)
        _ = pipeline.receive(Self.batch("node-b", seq: 1, at: 1_763_774_700_100, rssi: -60), node: "node-a", at: 1_763_774_700_200)
        let stranger = SightingBatch(node: "node-a", seq: 2, sent: 1_763_774_700_300, sightings: [
            Sighting(ts: 1_763_774_700_300, id: "mac:00:11:22:33:44:55", rssi: -50),
            Sighting(ts: 1_763_774_700_300, id: Self.tag, rssi: -50),
        ])
        _ = pipeline.receive(stranger.encoded(), node: "node-a", at: 1_763_774_700_300)
        _ = pipeline.receive(Self.batch("ghost", seq: 1, at: 1_763_774_700_300, rssi: -60), node: "ghost", at: 1_763_774_700_400)
        let c = pipeline.counters
        #expect(c.batches == 4)
        #expect(c.rejectedBatches == ["not_json": 1, "wrong_node": 1])
        #expect(c.sightings == 2 && c.observations == 1)
        #expect(c.unmatched == ["unregistered": 1])
        #expect(pipeline.strangers.counts == [.unregisteredNode: 1])
        #expect(pipeline.nodeClocks["ghost"] == nil)
    }

    @Test func registryChangesEndSessionsWithTheirReason() {
        let start: Int64 = 1_763_774_700_000
        var pipeline = PresencePipeline(configuration: .init(), registry: Self.registry, start: start)
        var events: [PresenceEvent] = []
        for i in 0 ..< 6 {
            let t = start + Int64(i) * 500
            events += pipeline.receive(Self.batch("node-a", seq: Int64(i), at: t, rssi: -55), node: "node-a", at: t).events
        }
        events += pipeline.advanceClock(to: start + 5_000)
        #expect(events.map(\.kind) == [.enter])
        var incognito = Self.registry
        incognito.users["alice"]?.incognitoUntil = start + 3_600_000
        let exits = pipeline.replaceRegistry(incognito, at: start + 6_000)
        #expect(exits.map(\.reason) == [.incognito])
        let later = pipeline.receive(Self.batch("node-a", seq: 9, at: start + 6_500, rssi: -55), node: "node-a", at: start + 6_500).events
        #expect(later.isEmpty && pipeline.counters.unmatched["incognito"] == 1)

        var second = PresencePipeline(configuration: .init(), registry: Self.registry, start: start)
        for i in 0 ..< 6 {
            let t = start + Int64(i) * 500
            _ = second.receive(Self.batch("node-a", seq: Int64(i), at: t, rssi: -55), node: "node-a", at: t)
        }
        _ = second.advanceClock(to: start + 5_000)
        var withoutA = Self.registry
        withoutA.beacons["a"] = nil
        withoutA.nodes["node-a"] = nil
        #expect(second.replaceRegistry(withoutA, at: start + 6_000).map(\.reason) == [.removed])
    }

    @Test func aBacklogAfterARestartIsDecidedInItsOwnTime() {
        // The previous run stopped at `stopped` with alice at a; she stayed 8 s more and left.
        let stopped: Int64 = 1_763_774_700_000
        let restart = stopped + 60_000
        var pipeline = PresencePipeline(configuration: .init(), registry: Self.registry, start: stopped)
        #expect(pipeline.resume([Presence(user: "alice", device: Self.tag, beacon: "a", venue: "expo", entered: stopped - 30_000, lastSeen: stopped - 500)],
                                at: stopped).isEmpty)
        pipeline.catchUp(awaitingNodesHeardSince: nil)
        var events: [PresenceEvent] = []
        var last: Int64 = 0
        for i in 0 ..< 16 {
            last = stopped + Int64(i) * 500
            events += pipeline.receive(Self.batch("node-a", seq: Int64(i), at: last, rssi: -55, sent: last + 50), node: "node-a",
                                       at: restart + Int64(i)).events
        }
        events += pipeline.advanceClock(to: restart + 1_000)
        #expect(events.map(\.kind) == [.exit])
        #expect(events.first?.at == last)
        #expect(events.first?.entered == stopped - 30_000)
        #expect(pipeline.engine.statistics.late == 0)
    }
}
