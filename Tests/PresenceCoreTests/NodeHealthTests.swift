import Testing
@testable import PresenceCore

/// What the pipeline does when a node goes offline, falls silent, or has a wrong clock.
@Suite struct NodeHealthTests {
    static let tag = PresencePipelineTests.tag
    static let start: Int64 = 1_763_774_700_000

    /// Alice stands at a: node-a hears her at -55, node-b (at the neighbouring booth) at -75.
    static func standingAtA(_ pipeline: inout PresencePipeline, from: Int64, to: Int64, nodeA: Bool = true, nodeB: Bool = true,
                            stats: Set<String> = []) -> [PresenceEvent] {
        var events: [PresenceEvent] = []
        var seq: Int64 = 0
        for t in stride(from: from, to: to, by: 500) {
            seq += 1
            if nodeA { events += pipeline.receive(PresencePipelineTests.batch("node-a", seq: seq, at: t, rssi: -55), node: "node-a", at: t + 20).events }
            if nodeB { events += pipeline.receive(PresencePipelineTests.batch("node-b", seq: seq, at: t, rssi: -75), node: "node-b", at: t + 30).events }
            if (t - from) % 5_000 == 0 {
                for node in stats.sorted() { events += pipeline.receiveStats(node: Substring(node), at: t + 40).events }
            }
        }
        return events
    }

    @Test func anOfflineNodeDoesNotHandTheWinToItsNeighbour() {
        var pipeline = PresencePipeline(configuration: .init(), registry: PresencePipelineTests.registry, start: Self.start)
        var events = Self.standingAtA(&pipeline, from: Self.start, to: Self.start + 10_000)
        #expect(events.map(\.beacon) == ["a"])
        events += pipeline.receiveStatus(node: "node-a", online: false, at: Self.start + 10_100).events
        // node-b keeps hearing her, weakly, for a minute: no move to b, no timeout exit.
        events += Self.standingAtA(&pipeline, from: Self.start + 10_000, to: Self.start + 70_000, nodeA: false)
        #expect(events.map(\.kind) == [.enter])
        // The hold (2 min) runs out: the session times out at her last sighting at a.
        events += Self.standingAtA(&pipeline, from: Self.start + 70_000, to: Self.start + 140_000, nodeA: false)
        events += pipeline.advanceClock(to: Self.start + 145_000)
        let exit = events.first { $0.kind == .exit }
        #expect(exit?.reason == .timeout && exit?.beacon == "a")
        #expect(exit?.at == Self.start + 9_500)
    }

    @Test func aNodeBackOnlineLetsTheEvidenceSpeakAgain() {
        var pipeline = PresencePipeline(configuration: .init(), registry: PresencePipelineTests.registry, start: Self.start)
        var events = Self.standingAtA(&pipeline, from: Self.start, to: Self.start + 10_000)
        events += pipeline.receiveStatus(node: "node-a", online: false, at: Self.start + 10_100).events
        events += Self.standingAtA(&pipeline, from: Self.start + 10_000, to: Self.start + 20_000, nodeA: false)
        events += pipeline.receiveStatus(node: "node-a", online: true, at: Self.start + 20_100).events
        // node-a is back and does not hear her: she left; the usual timeout applies from now on.
        events += Self.standingAtA(&pipeline, from: Self.start + 20_000, to: Self.start + 60_000, nodeA: false)
        #expect(events.map(\.kind) == [.enter, .exit, .enter])
        #expect(events.dropFirst().first?.reason == .moved)
    }

    @Test func aHeartbeatingNodeThatFallsSilentIsHeld() {
        var pipeline = PresencePipeline(configuration: .init(), registry: PresencePipelineTests.registry, start: Self.start)
        var events = Self.standingAtA(&pipeline, from: Self.start, to: Self.start + 10_000, stats: ["node-a", "node-b"])
        // node-a dies without a word (power cut: its will comes only after the broker's keep-alive).
        events += Self.standingAtA(&pipeline, from: Self.start + 10_000, to: Self.start + 60_000, nodeA: false, stats: ["node-b"])
        #expect(events.map(\.kind) == [.enter])
    }

    @Test func aHeartbeatingNodeThatStillTalksButNoLongerHearsHerMeansSheLeft() {
        var pipeline = PresencePipeline(configuration: .init(), registry: PresencePipelineTests.registry, start: Self.start)
        var events = Self.standingAtA(&pipeline, from: Self.start, to: Self.start + 10_000, stats: ["node-a", "node-b"])
        for t in stride(from: Self.start + 10_000, to: Self.start + 40_000, by: 5_000) {
            events += pipeline.receiveStats(node: "node-a", at: t).events
        }
        events += pipeline.advanceClock(to: Self.start + 40_000)
        #expect(events.map(\.kind) == [.enter, .exit])
        #expect(events.last?.at == Self.start + 9_500)
    }

    @Test func aNodeWhoseClockIsMinutesBehindIsCorrected() {
        var pipeline = PresencePipeline(configuration: .init(), registry: PresencePipelineTests.registry, start: Self.start)
        let skew: Int64 = -300_000
        var events: [PresenceEvent] = []
        for (index, t) in stride(from: Self.start, to: Self.start + 10_000, by: 500).enumerated() {
            let nodeTime = t + skew
            let payload = SightingBatch(node: "node-a", seq: Int64(index), sent: nodeTime + 50,
                                        sightings: [Sighting(ts: nodeTime, id: Self.tag, rssi: -55, tx: -59)]).encoded()
            events += pipeline.receive(payload, node: "node-a", at: t + 80).events
        }
        events += pipeline.advanceClock(to: Self.start + 12_000)
        #expect(pipeline.nodeClocks["node-a"]?.offset == 30 - skew)
        #expect(events.map(\.kind) == [.enter])
        #expect(pipeline.engine.statistics.late == 0)
        // The enter is dated in our time: within the walk, not five minutes before it.
        #expect((Self.start ... Self.start + 3_000).contains(events.first?.at ?? 0))
    }

    @Test func ordinaryDeliveryDelaysAreNotCorrected() {
        var clock = NodeClock()
        for delay: Int64 in [120, 80, 300, 95] { clock.observe(sent: 1_000, arrival: 1_000 + delay) }
        #expect(clock.offset == 120, "the third quickest delivery")
        #expect(clock.correction(threshold: 2_000) == 0)
        // A clock 6 s fast shows from its third batch on; one or two batches are not enough.
        for count in 1 ... 3 {
            clock.observe(sent: 1_000, arrival: -5_000)
            #expect(clock.correction(threshold: 2_000) == (count < 3 ? 0 : -6_000))
        }
    }
}
