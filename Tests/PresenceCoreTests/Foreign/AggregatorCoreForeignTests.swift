import Foundation
import Testing
@testable import PresenceCore

/// A foreign node's reports decide exactly as the same sightings in native batches do.
@Suite struct AggregatorCoreForeignTests {
    static let start = AggregatorCoreTests.start

    /// A core reading ESPresense under `espresense` and the gateways under `home`.
    static func core(_ configure: (inout AggregatorCore.Configuration) -> Void = { _ in }) -> AggregatorCore {
        AggregatorCoreTests.resumed { configuration in
            configuration.foreign = (try? ForeignTopics(espresense: "espresense", openMQTTGateway: "home", theengs: nil)) ?? ForeignTopics()
            configure(&configuration)
        }
    }

    /// The way each kind of node says that `node` heard the tag (`PresencePipelineTests.tag`) at
    /// `rssi` at `time` (its arrival: foreign reports carry no time of their own).
    enum Dialect: CaseIterable {
        case native, espresense, gateway, gatewayRaw

        func message(node: String, rssi: Int, at time: Int64, seq: Int64) -> (topic: String, payload: [UInt8]) {
            switch self {
            case .native:
                return (AggregatorCoreTests.topics.sightings(node: node),
                        SightingBatch(node: node, seq: seq, sent: time, sightings: [Sighting(ts: time, id: PresencePipelineTests.tag, rssi: rssi, tx: -59)]).encoded())
            case .espresense:
                return ("espresense/devices/iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1/\(node)", Array("""
                    {"mac":"c47c8d6a2b01","id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1","idType":1,"rssi@1m":-59,"rssi":\(rssi),"raw":nan,"distance":1.27,"var":inf,"int":102}
                    """.utf8))
            case .gateway:
                return ("home/\(node)/BTtoMQTT/C47C8D6A2B01", Array("""
                    {"id":"C4:7C:8D:6A:2B:01","mac_type":1,"rssi":\(rssi),"brand":"GENERIC","model":"iBeacon","model_id":"IBEACON","mfid":"4c00","uuid":"e2c56db5dffb48d2b060d0f5a71096e0","major":1,"minor":1,"txpower":-59}
                    """.utf8))
            case .gatewayRaw:
                return ("home/\(node)/BTtoMQTT/C47C8D6A2B01", Array("""
                    {"id": "c4:7c:8d:6a:2b:01", "rssi": \(rssi), "manufacturerdata": "4c000215e2c56db5dffb48d2b060d0f5a71096e000010001c5"}
                    """.utf8))
            }
        }

        func status(node: String, online: Bool) -> (topic: String, payload: [UInt8]) {
            switch self {
            case .native: (AggregatorCoreTests.topics.nodeStatus(node: node), ServiceStatus(state: online ? .online : .offline).encoded())
            case .espresense: ("espresense/rooms/\(node)/status", Array((online ? "online" : "offline").utf8))
            case .gateway, .gatewayRaw: ("home/\(node)/LWT", Array((online ? "online" : "offline").utf8))
            }
        }
    }

    /// A walk from a to b, then quiet at b while node-b says it is offline, then away; each message
    /// given to the core with its topic as a String, or as bytes (a stream subscriber's read).
    static func walk(_ dialect: Dialect, seed: UInt64, topicBytes: Bool = false) -> [PresenceEvent] {
        var core = core()
        func receive(_ topic: String, _ payload: [UInt8], at time: Int64) -> [PresenceEvent] {
            guard topicBytes else { return AggregatorCoreTests.events(AggregatorCoreTests.receive(&core, topic, payload, at: time)) }
            let actions = Array(topic.utf8).withUnsafeBytes { topic in payload.withUnsafeBytes { core.receive(topicBytes: topic, payload: $0, at: time) } }
            return AggregatorCoreTests.events(actions)
        }
        var random = RandomSource(seed: seed)
        var events: [PresenceEvent] = []
        var seq: Int64 = 0
        for t in stride(from: start, to: start + 40_000, by: 700) {
            seq += 1
            for node in ["node-a", "node-b"] where random.uniform() > 0.2 {
                let near = (node == "node-a") == (t < start + 20_000)
                let rssi = (near ? -58 : -74) + Int(random.gaussian() * 3)
                let received = t + Int64(random.uniform() * 300)
                let message = dialect.message(node: node, rssi: rssi, at: received, seq: seq)
                events += receive(message.topic, message.payload, at: received)
            }
        }
        let offline = dialect.status(node: "node-b", online: false)
        events += receive(offline.topic, offline.payload, at: start + 40_500)
        events += AggregatorCoreTests.events(core.tick(at: start + 70_000))
        let online = dialect.status(node: "node-b", online: true)
        events += receive(online.topic, online.payload, at: start + 70_000)
        events += AggregatorCoreTests.events(core.tick(at: start + 200_000))
        return events
    }

    @Test(arguments: [Dialect.espresense, .gateway, .gatewayRaw])
    func aWalkDecidesAsTheSameSightingsInBatches(_ dialect: Dialect) {
        for seed: UInt64 in [3, 17] {
            let native = Self.walk(.native, seed: seed)
            #expect(native.map { "\($0.kind) \($0.beacon)" } == ["enter a", "exit a", "enter b", "exit b"])
            // node-b said it was offline: the exit waits for it, and comes as the node's silence allows.
            #expect(native.last.map { $0.at < Self.start + 41_000 } ?? false)
            #expect(Self.walk(.native, seed: seed, topicBytes: true) == native, "a native topic given as bytes")
            #expect(Self.walk(dialect, seed: seed) == native, "seed \(seed)")
            #expect(Self.walk(dialect, seed: seed, topicBytes: true) == native, "seed \(seed), topics as bytes")
        }
    }

    @Test func aNodeThatSaysItIsOfflineHoldsItsReadingsAsANativeOneDoes() {
        var core = Self.core()
        var events: [PresenceEvent] = []
        for (index, t) in stride(from: Self.start, to: Self.start + 10_000, by: 500).enumerated() {
            let message = Dialect.espresense.message(node: "node-a", rssi: -60, at: t, seq: Int64(index))
            events += AggregatorCoreTests.events(AggregatorCoreTests.receive(&core, message.topic, message.payload, at: t))
        }
        let offline = Dialect.espresense.status(node: "node-a", online: false)
        events += AggregatorCoreTests.events(AggregatorCoreTests.receive(&core, offline.topic, offline.payload, at: Self.start + 10_000))
        // Past the absence timeout, but the node is down: no exit yet.
        events += AggregatorCoreTests.events(core.tick(at: Self.start + 30_000))
        #expect(events.map(\.kind) == [.enter])
        #expect(core.pipeline.engine.nodeHealthCount == 1)
    }

    @Test func strangersBadReportsAndOtherShardsAreCountedNotDecided() {
        var core = Self.core()
        _ = AggregatorCoreTests.receive(&core, "espresense/devices/x/kitchen", Array(#"{"id":"irk:00","rssi":-60}"#.utf8), at: Self.start + 100)
        _ = AggregatorCoreTests.receive(&core, "espresense/devices/x/_bad", Array(#"{"id":"irk:00","rssi":-60}"#.utf8), at: Self.start + 200)
        _ = AggregatorCoreTests.receive(&core, "home/node-a/BTtoMQTT/x", Array(#"{"id":"aa:bb:cc:dd:ee:ff","rssi":"loud"}"#.utf8), at: Self.start + 300)
        _ = AggregatorCoreTests.receive(&core, "home/node-a/BTtoMQTT/x", Array(#"{"id":"aa:bb:cc:dd:ee:ff","rssi":-61}"#.utf8), at: Self.start + 400)
        let counters = core.pipeline.counters
        #expect(core.pipeline.strangers.counts == [.unregisteredNode: 1, .badNodeName: 1])
        #expect(counters.rejectedBatches == ["bad_rssi": 1])
        #expect(counters.unmatched == ["unregistered": 1] && counters.observations == 0)

        var pipeline = PresencePipeline(configuration: .init(), registry: PresencePipelineTests.registry, start: Self.start)
        pipeline.own(ShardSet([1]))
        let message = Dialect.espresense.message(node: "node-a", rssi: -60, at: Self.start + 500, seq: 1)
        let outcome = message.payload.withUnsafeBytes { payload in
            Array("node-a".utf8).withUnsafeBytes { pipeline.receiveForeign(payload, dialect: .espresense, node: $0, at: Self.start + 500) }
        }
        #expect(outcome.observations == 0 && pipeline.counters.otherShards == 1)
    }
}
