import Testing
@testable import PresenceCore

/// The contract's sharding: the hash and its published vectors, how a batch splits, and the
/// configuration nodes read.
@Suite struct ShardsTests {
    /// The vectors docs/mqtt.md publishes: FNV-1a 32-bit, and the shard of each of 8.
    @Test(arguments: [
        ("", 0x811C_9DC5 as UInt32, 5), ("a", 0xE40C_292C, 4), ("foobar", 0xBF9C_F968, 0),
        ("ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:2:3", 0x9EED_F86C, 4), ("mac:c4:7c:8d:6a:2b:01", 0x2E35_D4D1, 1),
        ("node:badge-17", 0x107E_7327, 7), ("eddystone:edd1ebeac04e5defa017:0123456789ab", 0x0BAA_AA44, 4),
    ])
    func theHashIsFNV1a32(_ identity: String, _ hash: UInt32, _ shardOfEight: Int) throws {
        #expect(Shards.fnv1a32(identity) == hash)
        #expect(try Shards(count: 8).shard(of: identity) == shardOfEight)
        #expect(Shards.one.shard(of: identity) == 0)
    }

    @Test func aBatchSplitsByDeviceAndLosesNothing() throws {
        let shards = try Shards(count: 4)
        let sightings = (1 ... 40).map { Sighting(ts: Int64($0), id: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:\($0)", rssi: -60 - $0 % 20) }
        let batch = SightingBatch(node: "hall-a", seq: 7, sent: 99, sightings: sightings)
        let parts = shards.parts(of: batch)
        #expect(parts.map(\.shard) == parts.map(\.shard).sorted() && Set(parts.map(\.shard)).count == parts.count)
        #expect(parts.allSatisfy { part in part.batch.node == "hall-a" && part.batch.seq == 7 && part.batch.sent == 99 })
        #expect(parts.allSatisfy { part in part.batch.sightings.allSatisfy { shards.shard(of: $0.id) == part.shard } })
        #expect(Set(parts.flatMap(\.batch.sightings).map(\.id)) == Set(sightings.map(\.id)) && parts.flatMap(\.batch.sightings).count == 40)
        // A part keeps its sightings in the batch's order.
        for part in parts { #expect(part.batch.sightings.map(\.ts) == part.batch.sightings.map(\.ts).sorted()) }
        // A heartbeat (no sightings) is one part on shard 0; a carried node keeps all on its own shard.
        #expect(shards.parts(of: SightingBatch(node: "hall-a", seq: 8, sent: 100, sightings: [])).map(\.shard) == [0])
        #expect(shards.parts(of: batch, carriedBy: "badge-17").map(\.shard) == [shards.shard(of: "node:badge-17")])
        #expect(Shards.one.parts(of: batch).map(\.batch) == [batch])
    }

    @Test func theConfigurationReadsBackAndRefusesCountsOutOfRange() throws {
        let config = VenueConfig(shards: try Shards(count: 8))
        #expect(String(decoding: config.encoded(), as: UTF8.self) == #"{"v":1,"shards":8}"#)
        #expect(VenueConfig(payload: config.encoded()) == config)
        for bad in [#"{"v":1,"shards":0}"#, #"{"v":1,"shards":1025}"#, #"{"v":1}"#, "[]", #"{"shards":"8"}"#, ""] {
            #expect(VenueConfig(payload: Array(bad.utf8)) == nil, "\(bad)")
        }
        #expect(throws: ValueError.self) { try Shards(count: 0) }
    }

    @Test func theCorePublishesTheCountAtTheStartAndWhenItChanges() throws {
        var registry = PresencePipelineTests.registry
        var core = AggregatorCoreTests.core(registry: registry)
        let start = Published.messages(core.resume(at: AggregatorCoreTests.start))
        #expect(start.first?.topic == "site/presence/v1/config" && start.first?.retain == true)
        #expect(start.first.flatMap { VenueConfig(payload: $0.payload) }?.shards == .one)
        registry.shards = try Shards(count: 4)
        let changed = Published.messages(core.replaceRegistry(registry, at: AggregatorCoreTests.start + 1_000))
        #expect(changed.filter { $0.topic == "site/presence/v1/config" }.map { VenueConfig(payload: $0.payload)?.shards.count } == [4])
        registry.users["someone"] = .init(key: "someone")
        #expect(!Published.messages(core.replaceRegistry(registry, at: AggregatorCoreTests.start + 2_000)).contains { $0.topic.hasSuffix("/v1/config") },
                "an unchanged count is not published again")
    }
}
