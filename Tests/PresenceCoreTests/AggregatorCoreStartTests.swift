import Testing
@testable import PresenceCore

/// How a core starts: its phases hold what they need (`AggregatorCore.State`), a sharing core owns
/// its first grant from its making, and an input out of its order is refused without a change.
@Suite struct AggregatorCoreStartTests {
    typealias Shards = AggregatorCoreShardsTests
    static let start = AggregatorCoreTests.start
    static let alice = Shards.shards.shard(of: Shards.tags.alice)
    static let bob = Shards.shards.shard(of: Shards.tags.bob)

    static func session(_ user: String, at beacon: String) -> Presence {
        Presence(user: user, device: user == "alice" ? Shards.tags.alice : Shards.tags.bob, beacon: beacon, venue: "expo", entered: start - 60_000,
                 lastSeen: start - 1_000)
    }

    /// A sharing core made with `sessions`, owning `first` from the start.
    static func sharing(sessions: [Presence], first: ShardGrant?) -> AggregatorCore {
        var configuration = AggregatorCore.Configuration()
        configuration.catchUp = false
        configuration.topics = Shards.topics
        configuration.sharing = true
        return AggregatorCore(configuration: configuration, registry: Shards.registry, sessions: sessions, owning: first, now: start)
    }

    static func place(of user: String, in core: AggregatorCore) -> String? {
        core.board.place(of: user)?.beacon
    }

    @Test func aSharingCoreResumesOnlyTheUsersOfItsFirstGrantsShards() {
        var core = Self.sharing(sessions: [Self.session("alice", at: "a"), Self.session("bob", at: "b")], first: ShardGrant(shards: ShardSet([Self.alice])))
        _ = core.resume(at: Self.start)
        #expect(Self.place(of: "alice", in: core) == "a")
        #expect(Self.place(of: "bob", in: core) == nil)
        #expect(core.ownedShards == ShardSet([Self.alice]))
    }

    @Test func theSessionsItWasMadeWithWinOverTheGrantsAndTheGrantFillsTheRest() {
        let grant = ShardGrant(shards: ShardSet([Self.alice, Self.bob]), sessions: [Self.session("alice", at: "b"), Self.session("bob", at: "b")])
        var core = Self.sharing(sessions: [Self.session("alice", at: "a")], first: grant)
        _ = core.resume(at: Self.start)
        #expect(Self.place(of: "alice", in: core) == "a", "what its own journal and database gave is fresher")
        #expect(Self.place(of: "bob", in: core) == "b")
    }

    @Test func aSharingCoreMadeWithoutAGrantOwnsNothingAndResumesNobody() {
        var core = Self.sharing(sessions: [Self.session("alice", at: "a")], first: nil)
        _ = core.resume(at: Self.start)
        #expect(core.ownedShards == .empty)
        #expect(Self.place(of: "alice", in: core) == nil)
    }

    @Test func aGrantBeforeResumeChangesWhatItResumes() {
        var core = Self.sharing(sessions: [Self.session("alice", at: "a"), Self.session("bob", at: "b")],
                                first: ShardGrant(shards: ShardSet([Self.alice, Self.bob])))
        _ = core.own(ShardGrant(shards: ShardSet([Self.bob])), at: Self.start)
        #expect(core.state == .starting(.init(sessions: [Self.session("bob", at: "b")])))
        _ = core.resume(at: Self.start)
        #expect(Self.place(of: "alice", in: core) == nil)
        #expect(Self.place(of: "bob", in: core) == "b")
    }

    @Test func aMessageBeforeResumeIsRefusedAndChangesNothing() {
        var core = AggregatorCoreTests.core(sessions: [])
        let batch = SightingBatch(node: "node-a", seq: 1, sent: Self.start, sightings: [Sighting(ts: Self.start, id: "x", rssi: -60)])
        #expect(AggregatorCoreTests.receive(&core, AggregatorCoreTests.topics.sightings(node: "node-a"), batch.encoded(), at: Self.start)
            == [.refused(.notResumed)])
        #expect(core.pipeline.counters.batches == 0)
        #expect(core.state == .starting(.init()))
    }

    @Test func aTickBeforeResumeIsRefused() {
        var core = AggregatorCoreTests.core()
        #expect(core.tick(at: Self.start + 1_000) == [.refused(.notResumed)])
        #expect(core.state == .starting(.init()))
    }

    @Test func aSecondResumeIsRefused() {
        var core = AggregatorCoreTests.resumed()
        #expect(core.resume(at: Self.start + 1_000) == [.refused(.alreadyResumed)])
        #expect(core.state == .live)
    }

    /// Whether each record `actions` make is published only once stored.
    static func publishedOnceStored(_ actions: [AggregatorCore.Action]) -> [Bool] {
        actions.compactMap { action in
            guard case .record(.decided(let decided)) = action else { return nil }
            return decided.publishOnceStored
        }
    }

    @Test func whileTheGrantSaysOthersShareTheVenueRecordsArePublishedOnceStored() {
        var core = Self.sharing(sessions: [], first: ShardGrant(shards: ShardSet([Self.alice]), shared: true))
        let records = Self.publishedOnceStored(core.resume(at: Self.start))
        #expect(!records.isEmpty && records.allSatisfy { $0 })
    }

    @Test func aGrantThatSaysItIsAloneAgainPublishesAtOnce() {
        // Owning a shard other than 0 first, it publishes the beacons' states once it takes them all.
        let notZero = Self.alice == 0 ? Self.bob : Self.alice
        var core = Self.sharing(sessions: [], first: ShardGrant(shards: ShardSet([notZero]), shared: true))
        _ = core.resume(at: Self.start)
        let records = Self.publishedOnceStored(core.own(ShardGrant(shards: ShardSet(0 ..< Shards.shards.count), shared: false), at: Self.start + 1_000))
        #expect(!records.isEmpty && records.allSatisfy { !$0 })
    }
}
