import Testing
@testable import PresenceCore

/// Nearest means the smallest path loss, tx − RSSI, not the strongest RSSI: radios differ in power,
/// so the loudest reading can come from the farther beacon. The other engine tests use tx −59
/// throughout, where the two rankings agree; here they disagree.
@Suite struct PathLossTests {
    static let start: Int64 = 1_763_774_700_000
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"

    /// What a pipeline with `registry` decides when each node hears its sightings every 500 ms for
    /// 5 s (frames with the given tx, or none).
    static func decide(_ registry: Registry, _ sightings: [(node: String, id: String, rssi: Int, tx: Int?)]) -> [PresenceEvent] {
        var pipeline = PresencePipeline(configuration: .init(), registry: registry, start: start)
        var events: [PresenceEvent] = []
        for (seq, t) in stride(from: start, to: start + 5_000, by: 500).enumerated() {
            for node in Set(sightings.map(\.node)).sorted() {
                let heard = sightings.filter { $0.node == node }.map { Sighting(ts: t, id: $0.id, rssi: $0.rssi, tx: $0.tx) }
                let payload = SightingBatch(node: node, seq: Int64(seq), sent: t, sightings: heard).encoded()
                events += pipeline.receive(payload, node: Substring(node), at: t + 20).events
            }
        }
        return events + pipeline.advanceClock(to: start + 10_000)
    }

    @Test(arguments: [
        // a: -65 dBm at tx -59 is 6 dB of path loss; b: -62 dBm at tx -50 is 12 dB. RSSI alone says b.
        (-59.0, -65.0, -50.0, -62.0, "a"),
        // The other way round: RSSI alone says a.
        (-50.0, -62.0, -59.0, -65.0, "b"),
    ])
    func theEnterGoesToTheSmallestPathLossNotTheStrongestSignal(_ txA: Double, _ rssiA: Double, _ txB: Double, _ rssiB: Double,
                                                               _ nearest: String) {
        var d = Drive()
        for t in stride(from: Int64(0), through: 5_000, by: 500) {
            d.hear("a", rssi: rssiA, at: t, tx: txA)
            d.hear("b", rssi: rssiB, at: t + 1, tx: txB)
        }
        #expect(d.events.map(\.beacon) == [nearest])
        // 6 dB of path loss is 10^(6/20) = 2.0 m at n = 2.
        #expect(abs((d.events.first?.distance ?? 0) - 1.995) < 0.01)
    }

    @Test(arguments: [
        // b gets 7 dB louder than a, but at tx -45 it is 8 dB of path loss against a's 1 dB: she stays.
        (-60.0, -53.0, -45.0, false),
        // a fades to -72 dBm (13 dB of path loss); b, weaker at -74 dBm but at tx -68, is 6 dB: 7 dB nearer, she moves.
        (-72.0, -74.0, -68.0, true),
    ])
    func aMoveFollowsPathLossNotTheStrongestSignal(_ rssiA: Double, _ rssiB: Double, _ txB: Double, _ moves: Bool) {
        var d = Drive()
        for t in stride(from: Int64(0), to: 10_000, by: 500) {
            d.hear("a", rssi: -60, at: t)
            d.hear("b", rssi: -75, at: t + 1)
        }
        for t in stride(from: Int64(10_000), to: 30_000, by: 500) {
            d.hear("a", rssi: rssiA, at: t)
            d.hear("b", rssi: rssiB, at: t + 1, tx: txB)
        }
        #expect(d.events.map(\.beacon) == (moves ? ["a", "a", "b"] : ["a"]))
        #expect(d.events.dropFirst().first?.reason == (moves ? .moved : nil))
    }

    /// A carried scanner, badge-1, hears beacons a and b, whose frames both say tx -59: a at -62 dBm
    /// (3 dB of path loss by its frame), b at -65 dBm (6 dB). a's registry entry says -50 (12 dB).
    @Test(arguments: [(nil, "a"), (-50, "b")] as [(Int?, String)])
    func theRegistrysBeaconTxOverridesTheFrames(_ registryTx: Int?, _ nearest: String) {
        let registry = Registry(
            venues: [.init(key: "expo")],
            beacons: [.init(key: "a", venue: "expo", identity: "ibeacon:\(Self.uuid):1:1", tx: registryTx),
                      .init(key: "b", venue: "expo", identity: "ibeacon:\(Self.uuid):1:2")],
            users: [.init(key: "alice")],
            devices: [.init(identity: "node:badge-1", user: "alice")])
        let events = Self.decide(registry, [("badge-1", "ibeacon:\(Self.uuid):1:1", -62, -59), ("badge-1", "ibeacon:\(Self.uuid):1:2", -65, -59)])
        #expect(events.map(\.beacon) == [nearest])
    }

    /// Alice carries a tag and a phone, whose frames both say tx -59. node-a hears the tag at -62 dBm
    /// (3 dB of path loss), node-b the phone at -58 dBm (1 dB by its frame; 13 dB by a registry entry
    /// of -45, a loud phone).
    @Test(arguments: [(nil, "b"), (-45, "a")] as [(Int?, String)])
    func theRegistrysDeviceTxOverridesTheFrames(_ phoneTx: Int?, _ nearest: String) {
        let phone = "ibeacon:\(Self.uuid):2:2"
        var registry = PresencePipelineTests.registry
        registry.devices[phone] = .init(identity: phone, user: "alice", tx: phoneTx)
        let events = Self.decide(registry, [("node-a", PresencePipelineTests.tag, -62, -59), ("node-b", phone, -58, -59)])
        #expect(events.map(\.beacon) == [nearest])
    }

    @Test func proximityIsUnknownWhenNoTxIsKnown() {
        var known = Drive()
        var assumed = Drive()
        for t in stride(from: Int64(0), through: 2_000, by: 500) {
            known.hear("a", rssi: -60, at: t)
            assumed.hear("a", rssi: -60, at: t, txKnown: false)
        }
        // 1 dB of path loss: 1.1 m, near (0.5 to 3 m).
        #expect(known.events.map(\.proximity) == [.near])
        #expect(assumed.events.map(\.proximity) == [.unknown])
        #expect(assumed.events.first?.distance == known.events.first?.distance, "the distance is still estimated, at -59 dBm")
    }

    /// Through the matcher: the tx is the registry's, else the frame's, else unknown.
    @Test(arguments: [(nil, nil, .unknown), (-59, nil, .near), (nil, -59, .near)] as [(Int?, Int?, Proximity)])
    func proximityIsUnknownOnlyWhenNeitherFrameNorRegistryGivesATx(_ frameTx: Int?, _ registryTx: Int?, _ proximity: Proximity) {
        var registry = PresencePipelineTests.registry
        registry.devices[PresencePipelineTests.tag]?.tx = registryTx
        let events = Self.decide(registry, [("node-a", PresencePipelineTests.tag, -60, frameTx)])
        #expect(events.map(\.proximity) == [proximity])
    }

    /// The exponent turns path loss into metres, the unit of a beacon's radius: 9.5 dB is 3 m at
    /// n = 2 (outside a 2 m radius) and 1.7 m at n = 4 (inside).
    @Test(arguments: [(2.0, false), (4.0, true)])
    func thePathLossExponentDecidesWhetherAReadingIsWithinTheRadius(_ exponent: Double, _ enters: Bool) {
        var d = Drive { $0.pathLossExponent = exponent }
        for t in stride(from: Int64(0), through: 5_000, by: 500) {
            d.hear("desk", rssi: -68.5, at: t, radius: 2)
        }
        d.tick(to: 30_000)
        #expect(d.summary == (enters ? ["enter desk @0", "exit desk timeout @5000"] : []))
    }
}
