import Foundation
import Testing
@testable import PresenceCore

/// Zone presence through the core: zone events beside the beacon events they follow from, zone
/// states, the journal, a restart in the middle, a registry change and an erasure.
@Suite struct AggregatorCoreZonesTests {
    static let start = AggregatorCoreTests.start
    static let topics = AggregatorCoreTests.topics

    /// Beacon a in an office on a floor, beacon b on the floor.
    static var registry: Registry {
        var registry = PresencePipelineTests.registry
        registry.zones = ["floor": .init(key: "floor", venue: "expo"), "office": .init(key: "office", parent: "floor")]
        registry.beacons["a"]?.zone = "office"
        registry.beacons["b"]?.zone = "floor"
        return registry
    }

    static func core(sessions: [Presence] = [], zoneSessions: [ZoneSession] = [], savedClock: Int64? = nil, registry: Registry = registry) -> AggregatorCore {
        var configuration = AggregatorCore.Configuration()
        configuration.catchUp = false
        configuration.topics = topics
        return AggregatorCore(configuration: configuration, registry: registry, sessions: sessions, zoneSessions: zoneSessions, savedClock: savedClock,
                              now: start)
    }

    /// Runs the walk (a, then b, then away) from `from` up to `until` (received times), then ticks to `until`.
    static func walk(_ core: inout AggregatorCore, from: Int64 = .min, until: Int64) -> [AggregatorCore.Action] {
        var actions: [AggregatorCore.Action] = []
        for (node, payload, received) in PresencePipelineTests.walk(seed: 9, start: start) where received >= from && received < until {
            actions += AggregatorCoreTests.receive(&core, topics.sightings(node: node), payload, at: received)
            actions += core.tick(at: received)
        }
        return actions + core.tick(at: until)
    }

    static func zoneLines(_ actions: [AggregatorCore.Action]) -> [String] {
        Published.records(actions).flatMap(\.zoneEvents).map { "\($0.kind.rawValue) \($0.zone)\($0.reason.map { " " + $0.rawValue } ?? "")" }
    }

    @Test func aWalkEntersEveryLevelKeepsTheFloorAcrossTheMoveAndLeavesInnermostFirst() throws {
        var core = Self.core()
        let actions = core.resume(at: Self.start) + Self.walk(&core, until: Self.start + 120_000)
        #expect(Self.zoneLines(actions) == ["enter floor", "enter office", "exit office moved", "exit floor timeout"])
        let records = Published.records(actions)
        let events = records.flatMap(\.events)
        let zoneEvents = records.flatMap(\.zoneEvents)
        #expect(events.map(\.kind) == [.enter, .exit, .enter, .exit])
        #expect(zoneEvents[0].at == events[0].at && zoneEvents[2].at == events[1].at && zoneEvents[3].at == events[3].at)
        #expect(zoneEvents[3].entered == events[0].at, "the floor's stay spans both beacons")
        #expect(zoneEvents.allSatisfy { $0.user == "alice" && $0.device == PresencePipelineTests.tag })
        #expect(zoneEvents.map(\.venue) == ["expo", "expo", "expo", "expo"], "the office takes its beacon's venue")

        let move = try #require(records.first { $0.events.count == 2 })
        #expect(move.messages.prefix(3).map(\.topic) == ["site/presence/v1/events/a/alice", "site/presence/v1/zones/events/office/alice",
                                                        "site/presence/v1/events/b/alice"])
        let office = try #require(move.messages.first { $0.topic == "site/presence/v1/zones/state/office" })
        #expect(office.retain && String(decoding: office.payload, as: UTF8.self) == #"{"v":1,"zone":"office","users":[],"count":0}"#)
        let enter = try #require(records.first { $0.events.count == 1 && $0.events[0].kind == .enter })
        #expect(enter.messages.prefix(3).map(\.topic) == ["site/presence/v1/zones/events/floor/alice", "site/presence/v1/zones/events/office/alice",
                                                         "site/presence/v1/events/a/alice"])
        let floor = Published.objects(enter.messages, on: "site/presence/v1/zones/state/floor")
        #expect(floor.first?["users"] as? [String] == ["alice"] && floor.first?["count"] as? Int == 1)
    }

    @Test func aRestartInTheMiddleChangesNothingAndAStayOpenAcrossItKeepsItsEntry() throws {
        var whole = Self.core()
        let uninterrupted = whole.resume(at: Self.start) + Self.walk(&whole, until: Self.start + 120_000)

        let stop = Self.start + 30_000
        var first = Self.core()
        let before = first.resume(at: Self.start) + Self.walk(&first, until: stop) + first.finish(at: stop)
        // What a restart reads: the records laid over an empty database, through the journal's codec.
        var fold = JournalFold(sessions: [], clock: nil, notifications: [])
        for action in before {
            guard case .record(let record) = action else { continue }
            fold.apply(try JournalCodec.decode(JournalCodec.encode(record)[...], topics: Self.topics))
        }
        #expect(fold.openZoneSessions.map(\.zone) == ["floor"], "at b: on the floor")
        var second = Self.core(sessions: fold.openSessions, zoneSessions: fold.openZoneSessions, savedClock: fold.clock)
        let after = second.resume(at: stop) + Self.walk(&second, from: stop, until: Self.start + 120_000)
        let ids = { (actions: [AggregatorCore.Action]) in Published.records(actions).flatMap(\.zoneEvents).map(\.id) }
        #expect(ids(before) + ids(after) == ids(uninterrupted))
        #expect(Self.zoneLines(after) == ["exit floor timeout"])
    }

    @Test func aZoneAddedOrChangedUnderPresentUsersIsEnteredOrLeftAtOnce() {
        var core = Self.core(registry: PresencePipelineTests.registry)
        var actions = core.resume(at: Self.start) + Self.walk(&core, until: Self.start + 10_000)
        #expect(Self.zoneLines(actions).isEmpty)
        actions = core.replaceRegistry(Self.registry, at: Self.start + 10_000)
        #expect(Self.zoneLines(actions) == ["enter floor", "enter office"])
        let states = Published.messages(actions).filter { $0.topic.contains("/zones/state/") }.map(\.topic)
        #expect(states.contains("site/presence/v1/zones/state/floor") && states.contains("site/presence/v1/zones/state/office"))
        var smaller = Self.registry
        smaller.zones["office"] = nil
        smaller.beacons["a"]?.zone = "floor"
        actions = core.replaceRegistry(smaller, at: Self.start + 11_000)
        #expect(Self.zoneLines(actions) == ["exit office removed"])
        #expect(Published.messages(actions).contains { $0.topic == "site/presence/v1/zones/state/office" && $0.payload.isEmpty && $0.retain },
                "the gone zone's retained state is deleted")
        #expect(core.zones.stays(of: "alice").map(\.zone) == ["floor"])
    }

    @Test func anIncognitoUserLeavesEveryZoneAsTheirBeacon() {
        var core = Self.core()
        _ = core.resume(at: Self.start) + Self.walk(&core, until: Self.start + 10_000)
        var hidden = Self.registry
        hidden.users["alice"]?.incognitoUntil = Self.start + 3_600_000
        let actions = core.replaceRegistry(hidden, at: Self.start + 11_000)
        #expect(Self.zoneLines(actions) == ["exit office incognito", "exit floor incognito"])
        #expect(core.zones.openSessions.isEmpty)
        #expect(Published.objects(Published.messages(actions), on: "site/presence/v1/zones/state/floor").last?["count"] as? Int == 0)
    }

    @Test func aForgottenUserLeavesTheirZonesWithoutAnEvent() {
        var core = Self.core()
        _ = core.resume(at: Self.start) + Self.walk(&core, until: Self.start + 10_000)
        #expect(core.zones.stays(of: "alice").map(\.zone) == ["floor", "office"] && core.zoneState(of: "office").users == ["alice"])
        var forgotten = Self.registry
        forgotten.users["alice"] = nil
        forgotten.devices = [:]
        forgotten.erasures = 1
        let actions = core.replaceRegistry(forgotten, at: Self.start + 11_000)
        #expect(Self.zoneLines(actions).isEmpty && AggregatorCoreTests.events(actions).isEmpty)
        #expect(core.zones.openSessions.isEmpty)
        let office = Published.objects(Published.messages(actions), on: "site/presence/v1/zones/state/office")
        #expect(office.last?["count"] as? Int == 0, "the zone's state is published again without them")
    }
}

/// Zones while aggregators share the venue: a user's zones are decided where the user is, follow
/// them to the core that takes their shard over, and the owner of shard 0 publishes the zones'
/// states with everyone's users.
@Suite struct AggregatorCoreZonesSharingTests {
    typealias Shards = AggregatorCoreShardsTests
    static let start = AggregatorCoreTests.start
    static let topics = AggregatorCoreTests.topics

    static var registry: Registry {
        var registry = Shards.registry
        registry.zones = ["hall": .init(key: "hall", venue: "expo")]
        registry.beacons["a"]?.zone = "hall"
        registry.beacons["b"]?.zone = "hall"
        return registry
    }

    static func core(sharing: Bool, now: Int64) -> AggregatorCore {
        Shards.core(sharing: sharing, now: now, registry: registry)
    }

    static func zoneEvents(_ actions: [AggregatorCore.Action]) -> [ZoneEvent] {
        Published.records(actions).flatMap(\.zoneEvents)
    }

    @Test func aUserHandedToAnotherCoreKeepsTheirZoneStayAndLeavesItThere() throws {
        let all = ShardSet(0 ..< Shards.shards.count)
        let alice = Shards.shards.shard(of: Shards.tags.alice), bob = Shards.shards.shard(of: Shards.tags.bob)
        var whole = Self.core(sharing: false, now: Self.start)
        var first = Self.core(sharing: true, now: Self.start)
        var firstEvents = Self.zoneEvents(first.own(all, sessions: [], at: Self.start))
        var second: AggregatorCore?
        var secondEvents: [ZoneEvent] = []
        var wholeEvents: [ZoneEvent] = []
        for arrival in Shards.arrivals() {
            wholeEvents += Self.zoneEvents(AggregatorCoreTests.receive(&whole, arrival.topic, arrival.payload, at: arrival.at))
            if second == nil, arrival.at >= Self.start + 10_000 {
                let released = first.own(ShardSet([alice]), sessions: [], at: arrival.at)
                #expect(Self.zoneEvents(released).isEmpty, "a shard given back ends nobody's zone stay")
                #expect(first.zones.stays(of: "bob").isEmpty)
                // What the database holds of bob when the other core takes his shard.
                let enter = try #require(firstEvents.first { $0.user == "bob" && $0.kind == .enter })
                let stored = Presence(user: "bob", device: Shards.tags.bob, beacon: enter.beacon, venue: "expo", entered: enter.at,
                                      lastSeen: Shards.lastSeen(released)["bob"] ?? 0)
                let stay = ZoneSession(user: "bob", zone: "hall", device: Shards.tags.bob, venue: "expo", entered: enter.at)
                var taker = Self.core(sharing: true, now: arrival.at)
                secondEvents += Self.zoneEvents(taker.own(ShardSet([bob]), sessions: [stored], zoneSessions: [stay], at: arrival.at))
                second = taker
            }
            firstEvents += Self.zoneEvents(AggregatorCoreTests.receive(&first, arrival.topic, arrival.payload, at: arrival.at))
            if var taker = second {
                secondEvents += Self.zoneEvents(AggregatorCoreTests.receive(&taker, arrival.topic, arrival.payload, at: arrival.at))
                second = taker
            }
        }
        wholeEvents += Self.zoneEvents(whole.tick(at: Self.start + 60_000))
        firstEvents += Self.zoneEvents(first.tick(at: Self.start + 60_000))
        secondEvents += Self.zoneEvents(second?.tick(at: Self.start + 60_000) ?? [])
        #expect(wholeEvents.map { "\($0.kind.rawValue) \($0.user)" }.sorted() == ["enter alice", "enter bob", "exit alice", "exit bob"])
        #expect(secondEvents.map { "\($0.kind.rawValue) \($0.user) \($0.entered ?? 0)" } == ["exit bob \(wholeEvents.first { $0.user == "bob" }?.at ?? -1)"])
        #expect((firstEvents + secondEvents).map(\.id).sorted() == wholeEvents.map(\.id).sorted())
    }

    @Test func theOwnerOfShardZeroPublishesZoneStatesListingEveryone() throws {
        let (registry, aliceTag, bobTag) = try Shards.splitTags(Self.registry)
        func core(owning shards: [Int]) -> AggregatorCore { Shards.core(owning: shards, registry: registry) }
        func zoneStates(_ actions: [AggregatorCore.Action]) -> [String] {
            Published.messages(actions).filter { $0.topic == Self.topics.zoneState("hall") }.map { String(decoding: $0.payload, as: UTF8.self) }
        }
        var leader = core(owning: [0])
        var other = core(owning: [Shards.shards.shard(of: bobTag)])
        var published: [String] = []
        var otherPublished: [String] = []
        for t in stride(from: Self.start, to: Self.start + 10_000, by: 500) {
            let batch = SightingBatch(node: "node-a", seq: t, sent: t, sightings: [aliceTag, bobTag].map { Sighting(ts: t, id: $0, rssi: -58, tx: -59) })
            let leaderActions = AggregatorCoreTests.receive(&leader, Self.topics.sightings(node: "node-a"), batch.encoded(), at: t + 50)
            published += zoneStates(leaderActions)
            otherPublished += zoneStates(Shards.forwardState(of: "alice", in: leaderActions, to: &other, at: t + 60))
            let actions = AggregatorCoreTests.receive(&other, Self.topics.sightings(node: "node-a"), batch.encoded(), at: t + 50)
            otherPublished += zoneStates(actions)
            published += zoneStates(Shards.forwardState(of: "bob", in: actions, to: &leader, at: t + 60))
        }
        published += zoneStates(leader.tick(at: Self.start + 12_000))
        #expect(otherPublished.isEmpty, "only the owner of shard 0 publishes zone states: \(otherPublished)")
        #expect(published.last == #"{"v":1,"zone":"hall","users":["alice","bob"],"count":2}"#, "\(published)")
        #expect(other.zones.openSessions.map(\.user) == ["bob"] && leader.zones.openSessions.map(\.user) == ["alice"], "each decides its own users' zones")
        for core in [leader, other] {
            #expect(core.statistics(at: Self.start + 12_000).zonePresent["hall"] == 2)
        }
    }
}
