import Testing
@testable import PresenceCore

@Suite struct AwaitedNodesTests {
    @Test func theFloorIsTheNodeHeardUpToTheEarliestAndMovesOnlyWithIt() {
        var awaited = AwaitedNodes(["a": 1_000, "b": 900, "c": 1_100])
        #expect(awaited.floor == 900 && awaited.count == 3)
        // A backlog's batch: a is heard up to 1,500, b still holds the floor.
        awaited.heard("a", sentOnOurClock: 1_500, at: 9_000, lateness: 1_000)
        #expect(awaited.floor == 900)
        awaited.heard("b", sentOnOurClock: 1_200, at: 9_001, lateness: 1_000)
        #expect(awaited.floor == 1_100)
        // An older batch (out of order) does not move a node back.
        awaited.heard("c", sentOnOurClock: 1_050, at: 9_002, lateness: 1_000)
        #expect(awaited.heardUpTo["c"] == 1_100 && awaited.floor == 1_100)
    }

    @Test func aNodeHeardLiveIsAwaitedNoMoreAndOneNotAwaitedChangesNothing() {
        var awaited = AwaitedNodes(["a": 1_000, "b": 2_000])
        awaited.heard("x", sentOnOurClock: 500, at: 10_000, lateness: 1_000)
        #expect(awaited == AwaitedNodes(["a": 1_000, "b": 2_000]))
        // Within the lateness of its arrival: live.
        awaited.heard("a", sentOnOurClock: 9_000, at: 10_000, lateness: 1_000)
        #expect(awaited.heardUpTo.keys.sorted() == ["b"] && awaited.floor == 2_000)
        awaited.heard("b", sentOnOurClock: 9_999, at: 10_000, lateness: 1_000)
        #expect(awaited.isEmpty && awaited.floor == .max)
    }

    @Test func noneAwaitedHoldsNothing() {
        #expect(AwaitedNodes().floor == .max)
        #expect(AwaitedNodes().isEmpty)
    }

    @Test func extremeTimesDoNotTrap() {
        var awaited = AwaitedNodes(["a": .min, "b": 0])
        awaited.heard("a", sentOnOurClock: .min, at: .max, lateness: 1_000)
        #expect(awaited.heardUpTo["a"] == .min && awaited.floor == .min)
        awaited.heard("a", sentOnOurClock: .max, at: .max, lateness: 0)
        #expect(awaited.heardUpTo.keys.sorted() == ["b"] && awaited.floor == 0)
    }
}
