import Testing
@testable import PresenceCore

@Suite struct ShardShareTests {
    @Test func aFairShareIsTheCeilingOfShardsPerLiveAggregator() {
        #expect(ShardShare.fairShare(count: 8, live: 1) == 8)
        #expect(ShardShare.fairShare(count: 8, live: 2) == 4)
        #expect(ShardShare.fairShare(count: 8, live: 3) == 3)
        #expect(ShardShare.fairShare(count: 1, live: 2) == 1)
        #expect(ShardShare.fairShare(count: 8, live: 0) == 8)
    }

    @Test func aNewcomerTakesFreeShardsAndTheOthersGiveTheirExtrasBack() {
        // Alone with all 8; a second one joins: give back the highest 4.
        let first = ShardShare(count: 8, live: 2, held: Set(0 ..< 8), free: [])
        #expect(first.give == [4, 5, 6, 7] && first.take.isEmpty)
        // The newcomer finds them free (its order rotated by its start).
        let second = ShardShare(count: 8, live: 2, held: [], free: [4, 5, 6, 7], start: 6)
        #expect(second.give.isEmpty && second.take == [6, 7, 4, 5])
    }

    @Test func survivorsOfACrashTakeEverythingAndAShrunkCountGivesBackWhatIsGone() {
        let survivor = ShardShare(count: 8, live: 1, held: [0, 1, 2, 3], free: [4, 5, 6, 7])
        #expect(survivor.take == [4, 5, 6, 7] && survivor.give.isEmpty)
        let shrunk = ShardShare(count: 2, live: 1, held: [0, 1, 2, 3], free: [])
        #expect(shrunk.give == [2, 3] && shrunk.take.isEmpty)
        let full = ShardShare(count: 4, live: 2, held: [0, 1], free: [2, 3])
        #expect(full.take.isEmpty && full.give.isEmpty)
    }
}
