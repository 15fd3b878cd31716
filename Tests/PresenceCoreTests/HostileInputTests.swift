import Testing
@testable import PresenceCore

/// What anyone who can publish can send: extreme numbers, invented node names, and times from
/// far outside any clock. None of it may trap, and none of it may grow state.
@Suite struct HostileInputTests {
    static let start: Int64 = 1_763_774_700_000

    static func payload(node: String = "node-a", sent: Int64, ts: Int64) -> [UInt8] {
        Array(#"{"v":1,"node":"\#(node)","seq":1,"sent":\#(sent),"sightings":[{"ts":\#(ts),"id":"\#(PresencePipelineTests.tag)","rssi":-50}]}"#.utf8)
    }

    @Test(arguments: [Int64.min, Int64.max, 0, -1, 946_684_799_999, 4_102_444_800_001])
    func aBatchSentOutsideThePlausibleYearsIsRejectedWhole(sent: Int64) {
        #expect(SightingBatchDecoder.decode(Self.payload(sent: sent, ts: Self.start), topicNode: "node-a") == .failure(.badField("sent")))
    }

    @Test(arguments: [(Int64.min, Int64.min), (Int64.max, Int64.max), (0, 0), (Int64.min, Int64.max), (Int64.max, Int64.min),
                      (start, Int64.max), (Int64.max, start), (start, Int64.min)])
    func extremeTimesInABatchNeitherTrapNorMoveTheClock(sent: Int64, ts: Int64) {
        var pipeline = PresencePipeline(configuration: .init(), registry: PresencePipelineTests.registry, start: Self.start)
        let outcome = pipeline.receive(Self.payload(sent: sent, ts: ts), node: "node-a", at: Self.start + 100)
        #expect(outcome.refusal != nil || outcome.droppedSightings == 1)
        // Only a plausible `sent` is taken as the node's clock.
        #expect(pipeline.nodeClocks["node-a"]?.offset == (outcome.refusal == nil ? 100 : nil))
        // Valid traffic afterwards is decided as before.
        var events: [PresenceEvent] = []
        for i in 1 ... 8 {
            let t = Self.start + Int64(i) * 500
            events += pipeline.receive(PresencePipelineTests.batch("node-a", seq: Int64(i), at: t, rssi: -55), node: "node-a", at: t).events
        }
        events += pipeline.advanceClock(to: Self.start + 6_000)
        #expect(events.map(\.kind) == [.enter])
    }

    @Test func aSentFarAheadIsRefusedAndAFewWrongOnesDoNotMoveTheNodesClock() {
        var pipeline = PresencePipeline(configuration: .init(), registry: PresencePipelineTests.registry, start: Self.start)
        let t = Self.start + 1_000
        #expect(pipeline.receive(Self.payload(sent: t, ts: t), node: "node-a", at: t + 100).refusal == nil)
        #expect(pipeline.nodeClocks["node-a"]?.offset == 100)
        // An hour ahead: refused and counted, the clock estimate untouched.
        let forged = pipeline.receive(Self.payload(sent: t + 3_600_000, ts: t), node: "node-a", at: t + 200)
        #expect(forged.refusal == .invalid(.sentAhead(milliseconds: 3_600_000 - 200)))
        #expect(pipeline.counters.rejectedBatches["sent_ahead"] == 1)
        #expect(pipeline.nodeClocks["node-a"]?.offset == 100)
        // Five minutes ahead, twice: within the bound, yet two batches cannot move the estimate.
        for i in 1 ... 2 {
            let time = t + Int64(i) * 300
            #expect(pipeline.receive(Self.payload(sent: time + 300_000, ts: time), node: "node-a", at: time).refusal == nil)
        }
        #expect(pipeline.nodeClocks["node-a"]?.correction(threshold: 2_000) == 0)
        var events: [PresenceEvent] = []
        for i in 1 ... 8 {
            let time = t + 1_000 + Int64(i) * 500
            events += pipeline.receive(PresencePipelineTests.batch("node-a", seq: Int64(i), at: time, rssi: -55), node: "node-a", at: time).events
        }
        events += pipeline.advanceClock(to: t + 8_000)
        #expect(events.map(\.kind) == [.enter], "the node's sightings still count in their own time")
    }

    @Test(arguments: [Int64.min, Int64.max, 0, -(1 << 60), 1 << 60])
    func arrivalsAndTicksAtAnyTimeNeitherTrapNorHang(time: Int64) {
        var pipeline = PresencePipeline(configuration: .init(), registry: PresencePipelineTests.registry, start: time)
        _ = pipeline.receive(PresencePipelineTests.batch("node-a", seq: 1, at: Self.start, rssi: -55), node: "node-a", at: time)
        _ = pipeline.receiveStats(node: "node-a", at: time)
        _ = pipeline.receiveStatus(node: "node-b", online: false, at: time)
        _ = pipeline.advanceClock(to: time)
        _ = pipeline.advanceClock(to: .max)
        #expect(pipeline.clock == TimeBounds.representable.upperBound)
        _ = pipeline.resume([Presence(user: "alice", device: PresencePipelineTests.tag, beacon: "a", venue: nil, entered: .min, lastSeen: .max)],
                            at: time)
        _ = pipeline.advanceClock(to: .max)
    }

    @Test func inventedNamesOnEveryNodeTopicAreCountedButKeepNoState() {
        var pipeline = PresencePipeline(configuration: .init(), registry: PresencePipelineTests.registry, start: Self.start)
        var time = Self.start
        for i in 0 ..< 5_000 {
            time += 1
            let invented = i % 2 == 0 ? "ghost-\(i)" : String(repeating: "X/\u{0}é", count: 1_000) + "\(i)"
            let node = Substring(invented)
            #expect(pipeline.receive(Self.payload(node: invented, sent: time, ts: time), node: node, at: time).refusal != nil)
            #expect(pipeline.receiveStats(node: node, at: time).refusal != nil)
            #expect(pipeline.receiveStatus(node: node, online: false, at: time).refusal != nil)
        }
        #expect(pipeline.nodeClocks.isEmpty)
        #expect(pipeline.engine.nodes.isEmpty)
        #expect(pipeline.strangers.counts == [.unregisteredNode: 7_500, .badNodeName: 7_500])
        #expect(pipeline.strangers.recent.count == StrangerNodes.capacity)
        #expect(pipeline.strangers.recent.allSatisfy { $0.name.utf8.count <= 64 && $0.name.utf8.allSatisfy { (0x20 ... 0x7E).contains($0) } })
        #expect(pipeline.strangers.recent.contains { $0.name == "ghost-4998" })
    }

    @Test func aNodeRemovedFromTheRegistryLeavesNoState() {
        var pipeline = PresencePipeline(configuration: .init(), registry: PresencePipelineTests.registry, start: Self.start)
        _ = pipeline.receive(PresencePipelineTests.batch("node-b", seq: 1, at: Self.start, rssi: -70), node: "node-b", at: Self.start + 10)
        _ = pipeline.receiveStats(node: "node-b", at: Self.start + 20)
        #expect(pipeline.nodeClocks["node-b"] != nil && pipeline.engine.nodes["node-b"] != nil)
        var withoutB = PresencePipelineTests.registry
        withoutB.nodes["node-b"] = nil
        _ = pipeline.replaceRegistry(withoutB, at: Self.start + 30)
        #expect(pipeline.nodeClocks["node-b"] == nil && pipeline.engine.nodes["node-b"] == nil)
        #expect(pipeline.receiveStats(node: "node-b", at: Self.start + 40).refusal == .stranger(.unregisteredNode))
    }

    @Test func saturatingArithmeticHoldsAtTheBounds() {
        #expect(TimeBounds.sum(.max, 1) == .max && TimeBounds.sum(.min, -1) == .min && TimeBounds.sum(2, 3) == 5)
        #expect(TimeBounds.difference(.min, 1) == .min && TimeBounds.difference(.max, -1) == .max && TimeBounds.difference(.min, .max) == .min)
        #expect(TimeBounds.difference(5, 7) == -2)
        var clock = NodeClock()
        clock.observe(sent: .min, arrival: .max)
        #expect(clock.offset == .max)
    }
}
