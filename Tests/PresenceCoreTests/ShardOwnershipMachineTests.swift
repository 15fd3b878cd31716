import Testing
@testable import PresenceCore

/// Shard ownership without a database: each transition of `ShardOwnershipMachine`, the answers
/// given as the shell would give them.
@Suite struct ShardOwnershipMachineTests {
    typealias Action = ShardOwnershipMachine.Action

    /// Client "a" tries the free shards of 8 from shard 4 on (FNV-1a of "a" is 4 modulo 8).
    static let clientID = "a"
    static let eight = 8

    /// A session of `count` shards (that has joined and read the count): its next answer is the share.
    static func member(count: Int = eight) -> ShardOwnershipMachine {
        var machine = ShardOwnershipMachine(clientID: clientID)
        _ = machine.sessionOpened()
        _ = machine.joined(true)
        _ = machine.countRead(count)
        return machine
    }

    /// The actions from `action` to the end of the round, answered as a database and a loop that
    /// grant every lock in `granted` (all when nil), hold `sessions`, have a core on `coreCount`
    /// shards and a journal ending at `end`.
    static func finish(_ machine: inout ShardOwnershipMachine, from action: Action, granted: Set<Int>? = nil, sessions: [Presence] = [],
                       coreCount: Int? = eight, end: UInt64 = 1) -> [Action] {
        var actions = [action]
        var action = action
        while actions.count < 100 {
            switch action {
            case .join: action = machine.joined(true)
            case .readCount: action = machine.countRead(eight)
            case .readShare: return actions
            case .askCoreCount: action = machine.coreCountRead(coreCount)
            case .lock(let shard, _): action = granted.map { $0.contains(shard) } ?? true ? machine.lockGranted(shard) : machine.lockRefused(shard)
            case .readSessions: action = machine.sessionsRead(sessions, zoneSessions: [])
            case .grant: action = machine.granted(journalEnd: end)
            case .waitForWriter: action = machine.writerCaughtUp()
            case .unlock: action = machine.unlocked()
            case .endRound: return actions
            }
            actions.append(action)
        }
        return actions
    }

    /// A member that owns every shard of 8, alone.
    static func alone() -> ShardOwnershipMachine {
        var machine = member()
        _ = finish(&machine, from: machine.shareRead(live: 1, free: Set(0 ..< eight)))
        return machine
    }

    static func session(_ user: String) -> Presence {
        Presence(user: user, device: "tag-\(user)", beacon: "a", venue: "expo", entered: 1_000, lastSeen: 2_000)
    }

    // MARK: Joining

    @Test func aNewSessionStartsARoundByJoining() {
        var machine = ShardOwnershipMachine(clientID: Self.clientID)
        #expect(machine.sessionOpened() == .join)
    }

    @Test func aMemberReadsTheCountFirst() {
        var machine = ShardOwnershipMachine(clientID: Self.clientID)
        _ = machine.sessionOpened()
        #expect(machine.joined(true) == .readCount)
    }

    @Test func aRefusedMemberSaysSoOnceASessionAndTriesAgainEachRound() {
        var machine = ShardOwnershipMachine(clientID: Self.clientID)
        _ = machine.sessionOpened()
        #expect(machine.joined(false) == .endRound(.refused))
        #expect(machine.roundStarted() == .join)
        #expect(machine.joined(false) == .endRound(nil))
    }

    @Test func aRefusedMemberSaysSoAgainOnANewSession() {
        var machine = ShardOwnershipMachine(clientID: Self.clientID)
        _ = machine.sessionOpened()
        _ = machine.joined(false)
        machine.sessionLost()
        _ = machine.sessionOpened()
        #expect(machine.joined(false) == .endRound(.refused))
    }

    @Test func aMemberDoesNotJoinAgainOnTheNextRound() {
        var machine = Self.alone()
        #expect(machine.roundStarted() == .readCount)
    }

    @Test func theCountIsFollowedByTheShare() {
        var machine = ShardOwnershipMachine(clientID: Self.clientID)
        _ = machine.sessionOpened()
        _ = machine.joined(true)
        #expect(machine.countRead(Self.eight) == .readShare(count: Self.eight))
    }

    @Test func aRoundWithoutASessionDoesNothing() {
        var machine = ShardOwnershipMachine(clientID: Self.clientID)
        #expect(machine.roundStarted() == .endRound(nil))
    }

    // MARK: Taking

    @Test func theFirstRoundLocksFreeShardsInItsOwnOrderWithoutAskingTheCore() {
        var machine = Self.member()
        #expect(machine.shareRead(live: 1, free: Set(0 ..< Self.eight)) == .lock(shard: 4, of: Self.eight))
        #expect(machine.lockGranted(4) == .lock(shard: 5, of: Self.eight))
    }

    @Test func shardsTakenHaveTheirSessionsReadThenAreGranted() {
        var machine = Self.member(count: 2)
        _ = machine.shareRead(live: 1, free: [0, 1])
        _ = machine.lockGranted(0)
        #expect(machine.lockGranted(1) == .readSessions)
        #expect(machine.sessionsRead([Self.session("alice")], zoneSessions: [])
            == .grant(ShardGrant(shards: ShardSet([0, 1]), sessions: [Self.session("alice")], shared: false), keeping: .empty))
    }

    @Test func aGrantTakenEndsTheRoundSayingWhatIsOwned() {
        var machine = Self.member()
        let actions = Self.finish(&machine, from: machine.shareRead(live: 1, free: [2, 3]))
        #expect(actions.last == .endRound(.owned(shards: ShardSet([2, 3]), taken: ShardSet([2, 3]), givenBack: .empty, aggregators: 1)))
        #expect(machine.owned == ShardSet([2, 3]))
    }

    @Test func aLockRefusedIsNotGranted() {
        var machine = Self.member()
        let actions = Self.finish(&machine, from: machine.shareRead(live: 1, free: [2, 3]), granted: [3])
        #expect(actions.contains(.grant(ShardGrant(shards: ShardSet([3])), keeping: .empty)))
    }

    @Test func theFirstGrantIsHandedEvenWithNothingTakenAndNoSessionsRead() {
        var machine = Self.member()
        #expect(machine.shareRead(live: 3, free: []) == .grant(ShardGrant(shards: .empty, shared: true), keeping: .empty))
    }

    @Test func aRoundThatChangesNothingGrantsNothing() {
        var machine = Self.alone()
        _ = machine.roundStarted()
        _ = machine.countRead(Self.eight)
        #expect(machine.shareRead(live: 1, free: []) == .endRound(nil))
    }

    @Test func afterTheFirstGrantTheCoreIsAskedItsCountBeforeTaking() {
        var machine = Self.member()
        _ = Self.finish(&machine, from: machine.shareRead(live: 2, free: [0, 1, 2, 3]))
        _ = machine.roundStarted()
        _ = machine.countRead(Self.eight)
        #expect(machine.shareRead(live: 1, free: [4, 5, 6, 7]) == .askCoreCount)
    }

    @Test func aCoreOnTheSameCountTakes() {
        var machine = Self.member()
        _ = Self.finish(&machine, from: machine.shareRead(live: 2, free: [0, 1, 2, 3]))
        _ = machine.roundStarted()
        _ = machine.countRead(Self.eight)
        _ = machine.shareRead(live: 1, free: [4, 5, 6, 7])
        #expect(machine.coreCountRead(Self.eight) == .lock(shard: 4, of: Self.eight))
    }

    @Test(arguments: [4, nil] as [Int?])
    func aCoreOnAnotherCountOrSilentTakesNothing(_ coreCount: Int?) {
        var machine = Self.member()
        _ = Self.finish(&machine, from: machine.shareRead(live: 1, free: [0, 1, 2, 3]))
        _ = machine.roundStarted()
        _ = machine.countRead(Self.eight)
        #expect(machine.shareRead(live: 1, free: [4]) == .askCoreCount)
        #expect(machine.coreCountRead(coreCount) == .endRound(nil))
    }

    @Test func theSurvivorOfACrashTakesTheDeadOnesShardsKeepingItsOwn() {
        var machine = Self.member()
        _ = Self.finish(&machine, from: machine.shareRead(live: 2, free: [0, 1, 2, 3]))
        _ = machine.roundStarted()
        _ = machine.countRead(Self.eight)
        let actions = Self.finish(&machine, from: machine.shareRead(live: 1, free: [4, 5, 6, 7]), sessions: [Self.session("bob")])
        #expect(actions.contains(.grant(ShardGrant(shards: ShardSet(0 ..< 8), sessions: [Self.session("bob")], shared: false),
                                        keeping: ShardSet([0, 1, 2, 3]))))
        #expect(machine.owned == ShardSet(0 ..< 8))
    }

    // MARK: Giving back

    @Test func aNewcomerMakesItGrantItsShareAndWaitForTheWriterBeforeUnlocking() {
        var machine = Self.alone()
        _ = machine.roundStarted()
        _ = machine.countRead(Self.eight)
        #expect(machine.shareRead(live: 2, free: []) == .grant(ShardGrant(shards: ShardSet(0 ..< 4), shared: true), keeping: ShardSet(0 ..< 4)))
        #expect(machine.granted(journalEnd: 42) == .waitForWriter(end: 42))
        #expect(machine.writerCaughtUp() == .unlock(ShardSet(4 ..< 8), of: Self.eight, because: .share))
        #expect(machine.unlocked() == .endRound(.owned(shards: ShardSet(0 ..< 4), taken: .empty, givenBack: ShardSet(4 ..< 8), aggregators: 2)))
    }

    @Test func shardsGivenBackAreNoLongerHeld() {
        var machine = Self.alone()
        _ = machine.roundStarted()
        _ = machine.countRead(Self.eight)
        _ = Self.finish(&machine, from: machine.shareRead(live: 2, free: []))
        _ = machine.roundStarted()
        _ = machine.countRead(Self.eight)
        // Alone again, with its given-back shards free: it takes them anew.
        _ = machine.shareRead(live: 1, free: Set(4 ..< 8))
        #expect(machine.coreCountRead(Self.eight) == .lock(shard: 4, of: Self.eight))
    }

    @Test func whetherOthersShareTheVenueTravelsWithTheGrantThoughNoShardMoves() {
        var machine = Self.member(count: 1)
        _ = Self.finish(&machine, from: machine.shareRead(live: 1, free: [0]))
        _ = machine.roundStarted()
        _ = machine.countRead(1)
        #expect(machine.shareRead(live: 2, free: []) == .grant(ShardGrant(shards: ShardSet([0]), shared: true), keeping: ShardSet([0])))
        _ = machine.granted(journalEnd: 3)
        #expect(machine.shared)
    }

    // MARK: A new count

    @Test func aNewCountFirstGrantsNothingAndGivesEveryOldShardBackOnceStored() {
        var machine = Self.member(count: 2)
        _ = Self.finish(&machine, from: machine.shareRead(live: 1, free: [0, 1]))
        _ = machine.roundStarted()
        #expect(machine.countRead(Self.eight) == .grant(ShardGrant(shards: .empty), keeping: .empty))
        #expect(machine.granted(journalEnd: 7) == .waitForWriter(end: 7))
        #expect(machine.writerCaughtUp() == .unlock(ShardSet([0, 1]), of: 2, because: .countChanged))
        #expect(machine.unlocked() == .readShare(count: Self.eight))
        #expect(machine.owned == .empty)
    }

    @Test func aNewCountKeepsWhetherOthersShare() {
        var machine = Self.member(count: 2)
        _ = Self.finish(&machine, from: machine.shareRead(live: 2, free: [0, 1]))
        _ = machine.roundStarted()
        #expect(machine.countRead(Self.eight) == .grant(ShardGrant(shards: .empty, shared: true), keeping: .empty))
    }

    @Test func aNewCountWithNoShardHeldIsSharedAsItIs() {
        var machine = Self.member(count: 2)
        _ = Self.finish(&machine, from: machine.shareRead(live: 3, free: []))
        _ = machine.roundStarted()
        #expect(machine.countRead(Self.eight) == .readShare(count: Self.eight))
    }

    @Test func theNewCountsShardsAreTakenInTheSameRound() {
        var machine = Self.member(count: 2)
        _ = Self.finish(&machine, from: machine.shareRead(live: 1, free: [0, 1]))
        _ = machine.roundStarted()
        _ = Self.finish(&machine, from: machine.countRead(Self.eight))
        #expect(machine.shareRead(live: 1, free: Set(0 ..< 8)) == .askCoreCount)
    }

    // MARK: The database away

    @Test func aLostSessionLeavesTheCoreItsShards() {
        var machine = Self.alone()
        machine.sessionLost()
        #expect(machine.owned == ShardSet(0 ..< 8))
        #expect(machine.roundStarted() == .endRound(nil))
    }

    @Test func aNewSessionHoldsNoLockAndGrantsWhatItTookAgain() {
        var machine = Self.alone()
        machine.sessionLost()
        #expect(machine.sessionOpened() == .join)
        _ = machine.joined(true)
        _ = machine.countRead(Self.eight)
        // Another aggregator took shards 0 to 3 meanwhile: they are given up.
        let actions = Self.finish(&machine, from: machine.shareRead(live: 2, free: Set(4 ..< 8)))
        #expect(actions.contains(.grant(ShardGrant(shards: ShardSet(4 ..< 8), shared: true), keeping: ShardSet(4 ..< 8))))
        #expect(!actions.contains { if case .unlock = $0 { true } else { false } }, "a lost session holds nothing to give back")
    }

    // MARK: The loop stopped

    @Test func aGrantTheLoopDoesNotTakeStopsEverything() {
        var machine = Self.alone()
        _ = machine.roundStarted()
        _ = machine.countRead(Self.eight)
        _ = machine.shareRead(live: 2, free: [])
        #expect(machine.granted(journalEnd: nil) == .endRound(nil))
        #expect(machine.roundStarted() == .endRound(nil))
        machine.sessionLost()
        #expect(machine.sessionOpened() == .endRound(nil))
    }

    @Test func aNewCountTheLoopDoesNotTakeGivesNothingBack() {
        var machine = Self.member(count: 2)
        _ = Self.finish(&machine, from: machine.shareRead(live: 1, free: [0, 1]))
        _ = machine.roundStarted()
        _ = machine.countRead(Self.eight)
        #expect(machine.granted(journalEnd: nil) == .endRound(nil))
        #expect(machine.owned == .empty)
    }

    // MARK: Answers not asked for

    @Test func anAnswerNotAskedForEndsTheRoundAndTheNextStartsAfresh() {
        var machine = Self.alone()
        _ = machine.roundStarted()
        #expect(machine.writerCaughtUp() == .endRound(nil))
        #expect(machine.roundStarted() == .readCount)
    }

    @Test func aLockAnswerForAnotherShardEndsTheRoundKeepingTheLocksTaken() {
        var machine = Self.member()
        _ = machine.shareRead(live: 2, free: [4, 5, 6, 7])
        _ = machine.lockGranted(4)
        #expect(machine.lockGranted(6) == .endRound(nil))
        _ = machine.roundStarted()
        _ = machine.countRead(Self.eight)
        // Shard 4 is held: the first grant has it, with the others free.
        let actions = Self.finish(&machine, from: machine.shareRead(live: 2, free: [5, 6, 7]))
        #expect(actions.contains(.grant(ShardGrant(shards: ShardSet(4 ..< 8), shared: true), keeping: .empty)))
    }
}
