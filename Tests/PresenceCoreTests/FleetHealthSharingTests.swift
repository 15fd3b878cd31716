import Testing
@testable import PresenceCore

/// Aggregators sharing a venue each hear their shards' radios and batches; with the others'
/// parts, each one's report shows the whole venue, and the venue's report goes out once.
@Suite struct FleetHealthSharingTests {
    static let start = FleetHealthTests.start
    static let shards = AggregatorCoreShardsTests.shards
    /// Alice's tag on shard 0, Bob's on another.
    static let tags: (alice: String, bob: String) = {
        let candidates = (1 ... 256).map { "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:3:\($0)" }
        let alice = candidates.first { shards.shard(of: $0) == 0 } ?? candidates[0]
        let bob = candidates.first { shards.shard(of: $0) != 0 } ?? candidates[1]
        return (alice, bob)
    }()
    static var bobShard: Int { shards.shard(of: tags.bob) }
    static var aliceShards: ShardSet { ShardSet((0 ..< shards.count).filter { $0 != bobShard }) }

    /// The shards tests' venue (4 shards), with these tags.
    static let registry: Registry = {
        var registry = AggregatorCoreShardsTests.registry
        registry.devices = [tags.alice: .init(identity: tags.alice, user: "alice"), tags.bob: .init(identity: tags.bob, user: "bob")]
        return registry
    }()

    static func health(owning shards: ShardSet) -> FleetHealth {
        var health = FleetHealth(configuration: FleetHealth.Configuration(), registry: registry, start: start)
        health.own(shards)
        return health
    }

    /// `count` batches from `node`, one a second from `from` (ms after the start), of `sightings` each.
    static func batches(_ health: inout FleetHealth, node: String, from: Int64, count: Int, sightings: Int) {
        for second in 0 ..< Int64(count) {
            health.batch(from: node, at: start + from + second * 1_000, sightings: sightings, clockOffset: 40)
        }
    }

    static func absorb(_ health: inout FleetHealth, _ part: FleetReport?, from name: String) -> Bool {
        (part?.encoded() ?? []).withUnsafeBytes { health.absorb(part: $0, from: name) }
    }

    @Test func eachAggregatorsReportShowsTheWholeVenueWithTheOthersPart() throws {
        var first = Self.health(owning: Self.aliceShards)
        var second = Self.health(owning: ShardSet([Self.bobShard]))
        first.heard(Self.tags.alice, at: Self.start + 1_000, telemetry: FleetHealthTests.battery(2_400))
        second.heard(Self.tags.bob, at: Self.start + 2_000, telemetry: nil)
        Self.batches(&first, node: "node-a", from: 0, count: 12, sightings: 3)
        Self.batches(&second, node: "node-a", from: 500, count: 13, sightings: 5)
        let now = Self.start + 13_000

        // Each part lists the radios of its own shards only, and says which shards they are.
        let firstPart = try #require(first.part(at: now))
        let secondPart = try #require(second.part(at: now))
        #expect(firstPart.tags.map(\.identity) == [Self.tags.alice] && firstPart.shards == Self.aliceShards.sorted)
        #expect(secondPart.tags.map(\.identity) == [Self.tags.bob] && secondPart.shards == [Self.bobShard])
        let firstRate = try #require(firstPart.nodes.first { $0.key == "node-a" }).sightingsPerSecond
        let secondRate = try #require(secondPart.nodes.first { $0.key == "node-a" }).sightingsPerSecond
        #expect(firstRate == 3 && secondRate == 5)

        #expect(Self.absorb(&first, secondPart, from: "second"))
        #expect(Self.absorb(&second, firstPart, from: "first"))
        for report in [first.report(at: now), second.report(at: now)] {
            #expect(report.tags.map(\.identity).sorted() == [Self.tags.alice, Self.tags.bob].sorted())
            #expect(report.tags.first { $0.identity == Self.tags.bob }?.radio.lastHeard == Self.start + 2_000)
            #expect(report.problems == [FleetReport.Problem(kind: .lowBattery, subject: .tag(Self.tags.alice), batteryMillivolts: 2_400)])
            let node = try #require(report.nodes.first { $0.key == "node-a" })
            #expect(node.sightingsPerSecond == firstRate + secondRate)
            #expect(node.lastBatch == Self.start + 12_500 && node.state == .online)
            #expect(report.shards == nil)
        }
        // The node rows say the same as the report.
        #expect(first.nodeReports(at: now) == first.report(at: now).nodes)
    }

    @Test func aPartCountsOnlyWhileItIsTheNewestClaimOfAShardAndFresh() throws {
        var first = Self.health(owning: Self.aliceShards)
        var second = Self.health(owning: ShardSet([Self.bobShard]))
        Self.batches(&second, node: "node-b", from: 0, count: 12, sightings: 4)
        #expect(Self.absorb(&first, second.part(at: Self.start + 12_000), from: "second"))
        #expect(first.report(at: Self.start + 12_000).nodes.first { $0.key == "node-b" }?.sightingsPerSecond == 4)

        // A third aggregator took Bob's shard after the second died: its newer claim replaces the dead one's figures.
        var third = Self.health(owning: ShardSet([Self.bobShard]))
        Self.batches(&third, node: "node-b", from: 20_000, count: 12, sightings: 2)
        #expect(Self.absorb(&first, third.part(at: Self.start + 32_000), from: "third"))
        #expect(first.report(at: Self.start + 32_000).nodes.first { $0.key == "node-b" }?.sightingsPerSecond == 2)

        // Nobody claims it again for two report intervals: nothing stale is added.
        let late = Self.start + 32_000 + 2 * FleetHealth.Configuration().interval + 1
        #expect(first.report(at: late).nodes.first { $0.key == "node-b" }?.sightingsPerSecond == 0)

        // A shard this one hears is its own, whatever a part claims; a deleted part is forgotten.
        var everything = Self.health(owning: ShardSet(0 ..< Self.shards.count))
        #expect(everything.part(at: late) == nil)
        #expect(Self.absorb(&everything, third.part(at: Self.start + 32_000), from: "third"))
        #expect(everything.report(at: Self.start + 32_000).nodes.first { $0.key == "node-b" }?.sightingsPerSecond == 0)
        #expect(Self.absorb(&first, nil, from: "third"))
        #expect(first.parts["third"] == nil)
    }

    @Test func whatIsNotAPartOrNotRegisteredIsIgnored() {
        var first = Self.health(owning: Self.aliceShards)
        for garbage in ["{", "[]", #"{"v":1,"at":5}"#, #"{"shards":[1]}"#, #"{"at":"x","shards":[1]}"#, #"{"at":1,"shards":[1]} trailing"#] {
            #expect(!Array(garbage.utf8).withUnsafeBytes { first.absorb(part: $0, from: "x") }, "\(garbage)")
        }
        let stranger = #"{"at":1763774701000,"shards":[1,2000,-1],"tags":[{"id":"mac:aa:bb:cc:dd:ee:ff","last_heard":1763774701000}],"nodes":[{"node":"node-z","sightings_per_s":1e308},{"node":"node-a","sightings_per_s":-5}]}"#
        #expect(Array(stranger.utf8).withUnsafeBytes { first.absorb(part: $0, from: "x") })
        #expect(first.parts["x"]?.shards == [1] && first.parts["x"]?.nodes.keys.sorted() == ["node-a"])
        #expect(first.parts["x"]?.nodes["node-a"]?.sightingsPerSecond == 0)
        #expect(!first.report(at: Self.start + 2_000).tags.contains { $0.identity == "mac:aa:bb:cc:dd:ee:ff" })
    }

    static func core(owning shards: ShardSet, name: String) -> AggregatorCore {
        var configuration = AggregatorCore.Configuration()
        configuration.catchUp = false
        configuration.topics = AggregatorCoreTests.topics
        configuration.sharing = true
        configuration.name = name
        configuration.health = FleetHealth.Configuration()
        var core = AggregatorCore(configuration: configuration, registry: registry, now: start)
        _ = core.own(shards, sessions: [], at: start)
        _ = core.resume(at: start)
        return core
    }

    static func published(_ actions: [AggregatorCore.Action]) -> [(topic: String, report: FleetReport)] {
        actions.compactMap { action in
            guard case .health(let report, let topic) = action else { return nil }
            return (topic, report)
        }
    }

    @Test func theOwnerOfShardZeroPublishesTheVenuesReportAndEachItsPart() throws {
        let topics = AggregatorCoreTests.topics
        var first = Self.core(owning: Self.aliceShards, name: "first")
        var second = Self.core(owning: ShardSet([Self.bobShard]), name: "second")
        let batch = SightingBatch(node: "node-a", seq: 1, sent: Self.start + 400, sightings: [
            Sighting(ts: Self.start + 400, id: Self.tags.alice, rssi: -60), Sighting(ts: Self.start + 400, id: Self.tags.bob, rssi: -61),
        ])
        var firstActions: [AggregatorCore.Action] = []
        var secondActions: [AggregatorCore.Action] = []
        for (shard, part) in Self.shards.parts(of: batch) {
            let payload = part.encoded()
            if shard == Self.bobShard {
                secondActions += AggregatorCoreTests.receive(&second, topics.sightings(node: "node-a"), payload, at: Self.start + 450)
            } else {
                firstActions += AggregatorCoreTests.receive(&first, topics.sightings(node: "node-a"), payload, at: Self.start + 450)
            }
        }
        firstActions += first.tick(at: Self.start + 1_000)
        secondActions += second.tick(at: Self.start + 1_000)
        #expect(Self.published(firstActions).map(\.topic) == [topics.health, topics.healthPart("first")])
        #expect(Self.published(secondActions).map(\.topic) == [topics.healthPart("second")])
        let venue = try #require(Self.published(firstActions).first?.report)
        #expect(venue.tags.first { $0.identity == Self.tags.bob }?.radio.lastHeard == nil)

        // The second's part reaches the first (its own echo changes nothing): the next report has Bob's tag heard.
        let part = try #require(Self.published(secondActions).first?.report)
        _ = AggregatorCoreTests.receive(&first, topics.healthPart("second"), part.encoded(), at: Self.start + 1_100)
        _ = AggregatorCoreTests.receive(&first, topics.healthPart("first"), Array("not json".utf8), at: Self.start + 1_100)
        let later = Self.published(first.tick(at: Self.start + 61_000))
        #expect(later.first?.topic == topics.health)
        #expect(later.first?.report.tags.first { $0.identity == Self.tags.bob }?.radio.lastHeard != nil)
        let refused = AggregatorCoreTests.receive(&first, topics.healthPart("third"), Array("{".utf8), at: Self.start + 61_100)
        #expect(refused.contains { if case .log(let line) = $0 { line.level == .warning } else { false } })
    }
}
