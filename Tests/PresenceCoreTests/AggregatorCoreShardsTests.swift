import Testing
@testable import PresenceCore

/// Aggregators sharing a venue: a core decides only for the users of the shards it owns, and a
/// user handed from one core to another (saved last sighting, resumed session) gets exactly the
/// events one core deciding for everyone would have published.
@Suite struct AggregatorCoreShardsTests {
    static let shards = (try? Shards(count: 4)) ?? .one
    /// Two tags on different shards.
    static let tags: (alice: String, bob: String) = {
        let candidates = (1 ... 64).map { "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:\($0)" }
        let first = candidates[0]
        let second = candidates.first { shards.shard(of: $0) != shards.shard(of: first) } ?? first
        return (first, second)
    }()

    static let registry: Registry = {
        var registry = Registry(
            venues: [.init(key: "expo")],
            beacons: [.init(key: "a", venue: "expo"), .init(key: "b", venue: "expo")],
            nodes: [.init(key: "node-a", beacon: "a"), .init(key: "node-b", beacon: "b")],
            users: [.init(key: "alice"), .init(key: "bob")],
            devices: [.init(identity: tags.alice, user: "alice"), .init(identity: tags.bob, user: "bob")])
        registry.shards = shards
        return registry
    }()

    static let start = AggregatorCoreTests.start
    static let topics = AggregatorCoreTests.topics

    /// Both near beacon a for 20 s, then gone: one batch from each node every 500 ms.
    static func arrivals() -> [(topic: String, payload: [UInt8], at: Int64)] {
        var arrivals: [(String, [UInt8], Int64)] = []
        var seq: Int64 = 0
        for t in stride(from: start, to: start + 20_000, by: 500) {
            for (node, rssi) in [("node-a", -58), ("node-b", -75)] {
                seq += 1
                let sightings = [tags.alice, tags.bob].map { Sighting(ts: t, id: $0, rssi: rssi, tx: -59) }
                arrivals.append((topics.sightings(node: node), SightingBatch(node: node, seq: seq, sent: t, sightings: sightings).encoded(), t + 50))
            }
        }
        return arrivals
    }

    static func core(sharing: Bool, now: Int64, registry: Registry = registry) -> AggregatorCore {
        var configuration = AggregatorCore.Configuration()
        configuration.catchUp = false
        configuration.topics = topics
        configuration.sharing = sharing
        var core = AggregatorCore(configuration: configuration, registry: registry, now: now)
        _ = core.resume(at: now)
        return core
    }

    static func lastSeen(_ actions: [AggregatorCore.Action]) -> [String: Int64] {
        var seen: [String: Int64] = [:]
        for case .record(.progress(let progress)) in actions {
            for entry in progress.lastSeen { seen[entry.user] = entry.time }
        }
        return seen
    }

    @Test func homeShardsAreEachUsersLowestDeviceShard() {
        var registry = Self.registry
        registry.devices["node:carried"] = .init(identity: "node:carried", user: "bob")
        let lowest = min(Self.shards.shard(of: Self.tags.bob), Self.shards.shard(of: "node:carried"))
        #expect(registry.homeShards()["bob"] == lowest)
        #expect(registry.homeShards()["alice"] == Self.shards.shard(of: Self.tags.alice))
        var one = registry
        one.shards = .one
        #expect(Set(one.homeShards().values) == [0])
    }

    @Test func aSharingCoreStartsOwningNothingAndDecidesOnlyForItsShards() {
        let alice = Self.shards.shard(of: Self.tags.alice)
        var core = Self.core(sharing: true, now: Self.start)
        var events: [PresenceEvent] = []
        for (index, arrival) in Self.arrivals().enumerated() {
            if index == 10 { events += AggregatorCoreTests.events(core.own(ShardSet([alice]), sessions: [], at: arrival.at)) }
            events += AggregatorCoreTests.events(AggregatorCoreTests.receive(&core, arrival.topic, arrival.payload, at: arrival.at))
        }
        events += AggregatorCoreTests.events(core.tick(at: Self.start + 60_000))
        #expect(events.map { "\($0.kind.rawValue) \($0.user)" } == ["enter alice", "exit alice"])
        #expect(core.pipeline.counters.otherShards > 0)
    }

    @Test func aUserHandedToAnotherCoreGetsTheEventsOneCoreWouldHavePublished() {
        let all = ShardSet(0 ..< Self.shards.count)
        let alice = Self.shards.shard(of: Self.tags.alice), bob = Self.shards.shard(of: Self.tags.bob)
        var whole = Self.core(sharing: false, now: Self.start)
        var first = Self.core(sharing: true, now: Self.start)
        var firstEvents = AggregatorCoreTests.events(first.own(all, sessions: [], at: Self.start))
        var second: AggregatorCore?
        var secondEvents: [PresenceEvent] = []
        var wholeEvents: [PresenceEvent] = []
        var handedOver = false
        for arrival in Self.arrivals() {
            wholeEvents += AggregatorCoreTests.events(AggregatorCoreTests.receive(&whole, arrival.topic, arrival.payload, at: arrival.at))
            if !handedOver, arrival.at >= Self.start + 10_000 {
                handedOver = true
                // The first gives bob's shard back (saving his last sighting); the second locks it
                // and resumes him as the database says.
                let released = first.own(ShardSet([alice]), sessions: [], at: arrival.at)
                #expect(AggregatorCoreTests.events(released).isEmpty, "a shard given back ends nobody's session")
                let enter = firstEvents.first { $0.user == "bob" && $0.kind == .enter }
                let seen = Self.lastSeen(released)["bob"]
                #expect(seen != nil)
                let stored = Presence(user: "bob", device: Self.tags.bob, beacon: enter?.beacon ?? "", venue: "expo", entered: enter?.at ?? 0,
                                      lastSeen: seen ?? 0)
                var taker = Self.core(sharing: true, now: arrival.at)
                secondEvents += AggregatorCoreTests.events(taker.own(ShardSet([bob]), sessions: [stored], at: arrival.at))
                second = taker
            }
            firstEvents += AggregatorCoreTests.events(AggregatorCoreTests.receive(&first, arrival.topic, arrival.payload, at: arrival.at))
            if var taker = second {
                secondEvents += AggregatorCoreTests.events(AggregatorCoreTests.receive(&taker, arrival.topic, arrival.payload, at: arrival.at))
                second = taker
            }
        }
        wholeEvents += AggregatorCoreTests.events(whole.tick(at: Self.start + 60_000))
        firstEvents += AggregatorCoreTests.events(first.tick(at: Self.start + 60_000))
        secondEvents += AggregatorCoreTests.events(second?.tick(at: Self.start + 60_000) ?? [])
        #expect(wholeEvents.map { "\($0.kind.rawValue) \($0.user)" }.sorted() == ["enter alice", "enter bob", "exit alice", "exit bob"])
        #expect(secondEvents.map { "\($0.kind.rawValue) \($0.user)" } == ["exit bob"])
        #expect((firstEvents + secondEvents).sorted { $0.id < $1.id } == wholeEvents.sorted { $0.id < $1.id })
    }

    /// The retained states of `user` that `actions` publish, brought to `core` as the broker would;
    /// what `core` does about them.
    static func forwardState(of user: String, in actions: [AggregatorCore.Action], to core: inout AggregatorCore, at time: Int64) -> [AggregatorCore.Action] {
        var done: [AggregatorCore.Action] = []
        for case .record(.decided(let decided)) in actions {
            for message in decided.messages where message.topic == topics.userState(user) {
                done += AggregatorCoreTests.receive(&core, message.topic, message.payload, at: time)
            }
        }
        return done
    }

    /// Whether `actions` publish a state of `user`.
    static func published(stateOf user: String, in actions: [AggregatorCore.Action]) -> Bool {
        actions.contains { action in
            guard case .record(.decided(let decided)) = action else { return false }
            return decided.messages.contains { $0.topic == topics.userState(user) }
        }
    }

    /// Each aggregator's events reach the other (twice: QoS 1 may bring one again), and its own come back.
    static func exchangeEvents(_ actions: [AggregatorCore.Action], from: inout AggregatorCore, to: inout AggregatorCore, at time: Int64) -> [PageUpdate] {
        var updates: [PageUpdate] = []
        for case .record(.decided(let decided)) in actions {
            for message in decided.messages where message.event != nil {
                for _ in 0 ..< 2 {
                    for case .page(let shown) in AggregatorCoreTests.receive(&to, message.topic, message.payload, at: time) { updates += shown }
                }
                for case .page(let shown) in AggregatorCoreTests.receive(&from, message.topic, message.payload, at: time) { updates += shown }
            }
        }
        return updates
    }

    /// Alice's tag on shard 0, bob's on another: `registry` with them as the devices.
    static func splitTags(_ registry: Registry) throws -> (registry: Registry, alice: String, bob: String) {
        let candidates = (1 ... 200).map { "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:2:\($0)" }
        let aliceTag = try #require(candidates.first { shards.shard(of: $0) == 0 })
        let bobTag = try #require(candidates.first { shards.shard(of: $0) != 0 })
        var registry = registry
        registry.devices = [aliceTag: .init(identity: aliceTag, user: "alice"), bobTag: .init(identity: bobTag, user: "bob")]
        return (registry, aliceTag, bobTag)
    }

    /// A sharing core with the page on, owning `shards` from the start.
    static func core(owning shards: [Int], registry: Registry) -> AggregatorCore {
        var configuration = AggregatorCore.Configuration()
        configuration.catchUp = false
        configuration.topics = topics
        configuration.sharing = true
        configuration.page = true
        var core = AggregatorCore(configuration: configuration, registry: registry, now: start)
        _ = core.own(ShardSet(shards), sessions: [], at: start)
        _ = core.resume(at: start)
        return core
    }

    @Test func theOwnerOfShardZeroPublishesBeaconStatesListingEveryonesUsersAndTheOthersNone() throws {
        let (registry, aliceTag, bobTag) = try Self.splitTags(Self.registry)
        func core(owning shards: [Int]) -> AggregatorCore { Self.core(owning: shards, registry: registry) }
        func beaconStates(_ actions: [AggregatorCore.Action]) -> [String] {
            actions.flatMap { action -> [String] in
                guard case .record(.decided(let decided)) = action else { return [] }
                return decided.messages.filter { $0.topic.hasPrefix("\(Self.topics.prefix)/v1/state/beacons/") }
                    .map { "\($0.topic.split(separator: "/").last ?? "") \(String(decoding: $0.payload, as: UTF8.self))" }
            }
        }
        var leader = core(owning: [0])
        var other = core(owning: [Self.shards.shard(of: bobTag)])
        var published: [String] = []
        var otherPublished: [String] = []
        var bobPublished = false
        var feedUpdates: [PageUpdate] = []
        for t in stride(from: Self.start, to: Self.start + 10_000, by: 500) {
            let batch = SightingBatch(node: "node-a", seq: t, sent: t, sightings: [aliceTag, bobTag].map { Sighting(ts: t, id: $0, rssi: -58, tx: -59) })
            let leaderActions = AggregatorCoreTests.receive(&leader, Self.topics.sightings(node: "node-a"), batch.encoded(), at: t + 50)
            feedUpdates += Self.exchangeEvents(leaderActions, from: &leader, to: &other, at: t + 60)
            published += beaconStates(leaderActions)
            otherPublished += beaconStates(Self.forwardState(of: "alice", in: leaderActions, to: &other, at: t + 60))
            let actions = AggregatorCoreTests.receive(&other, Self.topics.sightings(node: "node-a"), batch.encoded(), at: t + 50)
            feedUpdates += Self.exchangeEvents(actions, from: &other, to: &leader, at: t + 60)
            otherPublished += beaconStates(actions)
            // What the other aggregator publishes of bob reaches the leader, as the broker would bring it.
            let forwarded = Self.forwardState(of: "bob", in: actions, to: &leader, at: t + 60)
            published += beaconStates(forwarded)
            bobPublished = bobPublished || Self.published(stateOf: "bob", in: actions)
        }
        #expect(bobPublished, "the other aggregator entered bob")
        #expect(otherPublished.isEmpty, "only the owner of shard 0 publishes beacon states: \(otherPublished)")
        published += beaconStates(leader.tick(at: Self.start + 12_000))
        #expect(published.last { $0.hasPrefix("a ") }?.contains(#""users":["alice","bob"]"#) == true, "\(published)")
        // Either aggregator's page shows both.
        for page in [leader.pagePresenceJSON(at: Self.start + 12_000), other.pagePresenceJSON(at: Self.start + 12_000)] {
            let text = String(decoding: page, as: UTF8.self)
            #expect(text.contains(#""count":2,"users":["alice","bob"]"#) || text.contains(#""users":["alice","bob"]"#), "\(text)")
        }
        // Either page's feed shows both enters, once each; the metrics count both at beacon a on either.
        #expect(feedUpdates.count == 2, "\(feedUpdates)")
        for core in [leader, other] {
            #expect(core.page?.feed.map { "\($0.event.kind.rawValue) \($0.event.user)" }.sorted() == ["enter alice", "enter bob"])
            #expect(core.statistics(at: Self.start + 12_000).present["a"] == 2)
        }
        #expect(AggregatorCoreTests.receive(&leader, Self.topics.event(beacon: "a", user: "bob"), Array("{}".utf8), at: Self.start + 12_000)
            .contains { if case .log(let line) = $0 { line.level == .warning } else { false } })
        // Bob's state deleted (he left): the leader lists alice alone again.
        published += beaconStates(AggregatorCoreTests.receive(&leader, Self.topics.userState("bob"), [], at: Self.start + 14_000))
        published += beaconStates(leader.tick(at: Self.start + 16_000))
        #expect(published.last { $0.hasPrefix("a ") }?.contains(#""users":["alice"]"#) == true, "\(published)")
    }

    @Test func sharingHomeAssistantGetsEachTrackerFromItsUsersAggregatorAndTheConfigsOnce() throws {
        let assistant = try HomeAssistantTopics(prefix: "ha")
        let bob = Self.shards.shard(of: Self.tags.bob), alice = Self.shards.shard(of: Self.tags.alice)
        try #require(bob != 0, "bob's aggregator must not be the one of shard 0")
        func published(owning shards: [Int]) -> [String] {
            var configuration = AggregatorCore.Configuration()
            configuration.catchUp = false
            configuration.topics = Self.topics
            configuration.sharing = true
            configuration.homeAssistant = .init(topics: assistant, pipeline: Self.topics)
            var core = AggregatorCore(configuration: configuration, registry: Self.registry, now: Self.start)
            let actions = core.own(ShardSet(shards), sessions: [], at: Self.start) + core.resume(at: Self.start)
            return actions.flatMap { action -> [String] in
                guard case .record(.decided(let decided)) = action else { return [] }
                return decided.messages.map(\.topic).filter { $0.hasPrefix("ha/") }
            }
        }
        let leader = published(owning: alice == 0 ? [0] : [0, alice])
        let other = published(owning: [bob])
        #expect(other.contains(assistant.trackerState("bob")) && !other.contains(assistant.trackerState("alice")), "\(other)")
        #expect(!other.contains { $0.hasSuffix("/config") }, "the configs come from one aggregator: \(other)")
        #expect(leader.contains(assistant.trackerConfig("bob")) && leader.contains(assistant.sensorConfig("a")), "\(leader)")
        #expect(!leader.contains(assistant.trackerState("bob")), "\(leader)")
    }
}
