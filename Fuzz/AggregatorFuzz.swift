import PresenceCore

/// The aggregator's decisions (`AggregatorCore`: topic dispatch, the pipeline, the board,
/// notifications, progress) on arbitrary messages: topics of every kind (sightings, status and
/// stats of registered, unregistered and malformed nodes, other aggregators' health parts, and
/// anything else), payloads as given or
/// as well-formed batches carrying fuzzed numbers, at fuzzed times (the ends of Int64 included),
/// with registry swaps and ticks in between, the fleet's health watched. Nothing may trap, and
/// strangers must leave no state.
///
/// Input: "PIPE", then records. A record's first byte `k` says what it is: `k & 3` the topic's kind
/// (sightings, status, stats, other: with `k & 0x40` and no registry swap another aggregator's
/// health part, else a foreign node's topic chosen by the next byte, `ForeignTopic`), `k >> 2 & 3` whose (node-a, node-b, the carried badge, or a name read from the input), `k & 0x10` an absolute time in the next 8 bytes (else one byte of
/// 50 ms steps), `k & 0x20` a well-formed batch (or foreign report) built from the next bytes (else a length-prefixed
/// payload), `k & 0x80` a tick after it, `k & 0xC0 == 0xC0` a registry swap first.
enum AggregatorFuzz {
    static let magic = Array("PIPE".utf8)
    static let start: Int64 = 1_763_774_700_000
    static let tag = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1"
    static let beacon = "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:2:3"
    static let identities = [tag, beacon, "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:2:9", "mac:c4:7c:8d:6a:2b:01", "node:badge"]
    /// Beacon a lies in zone hall; b, an iBeacon region, stands for a zone of its own inside it.
    static let registry = Registry(
        venues: [.init(key: "expo")],
        zones: [.init(key: "hall", venue: "expo")],
        beacons: [.init(key: "a", venue: "expo", x: 0, y: 0, radius: 3, zone: "hall"),
                  .init(key: "b", venue: "expo", identity: "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:2", x: 7, y: 0, zone: "hall")],
        nodes: [.init(key: "node-a", beacon: "a", x: 0, y: 0, rssiOffset: -3), .init(key: "node-b", beacon: "b")],
        users: [.init(key: "alice"), .init(key: "bob", incognitoUntil: start + 30_000)],
        devices: [.init(identity: tag, user: "alice", tx: -59), .init(identity: "node:badge", user: "bob")])
    static let smaller: Registry = {
        var smaller = AggregatorFuzz.registry
        smaller.nodes["node-b"] = nil
        smaller.users["bob"] = nil
        smaller.devices["node:badge"] = nil
        smaller.zones["hall"] = nil
        smaller.beacons["a"]?.zone = nil
        return smaller
    }()

    /// Built once: each input starts from a copy.
    static let fresh: AggregatorCore = {
        var configuration = AggregatorCore.Configuration()
        configuration.statsInterval = 2_000
        var health = FleetHealth.Configuration()
        health.silentAfter = 5_000
        health.nodeDownAfter = 3_000
        health.interval = 10_000
        configuration.health = health
        configuration.page = true
        configuration.homeAssistant = try? HomeAssistantDiscovery.Configuration(topics: HomeAssistantTopics(), pipeline: .standard)
        configuration.sharing = true
        configuration.foreign = (try? ForeignTopics(espresense: "espresense", openMQTTGateway: "home", theengs: nil)) ?? ForeignTopics()
        var core = AggregatorCore(configuration: configuration, registry: registry, sessions: [
            Presence(user: "alice", device: tag, beacon: "a", venue: "expo", entered: start - 60_000, lastSeen: start - 1_000),
        ], savedClock: start - 5_000, owning: ShardGrant(shards: ShardSet([0])), now: start)
        _ = core.resume(at: start)
        return core
    }()

    static func run(_ bytes: ArraySlice<UInt8>) {
        let topics = (try? Topics(prefix: "presence")) ?? { preconditionFailure("the default prefix is valid") }()
        var input = Cursor(bytes: bytes)
        var core = fresh
        var time = start
        var swapped = false
        while let k = input.byte() {
            if k & 0xC0 == 0xC0 {
                swapped.toggle()
                _ = core.replaceRegistry(swapped ? smaller : registry, at: time)
            }
            time = k & 0x10 != 0 ? input.int64() : TimeBounds.sum(time, Int64(input.byte() ?? 0) * 50)
            let node: String
            switch k >> 2 & 3 {
            case 0: node = "node-a"
            case 1: node = "node-b"
            case 2: node = "badge"
            default: node = String(decoding: input.bytes(Int(input.byte() ?? 0)), as: UTF8.self)
            }
            let foreign = k & 3 == 3 && k & 0xC0 != 0x40 ? ForeignTopic(rawValue: Int(input.byte() ?? 0) % 5) ?? .none : .none
            let payload: [UInt8]
            if k & 0x20 == 0 {
                payload = Array(input.bytes(Int(input.uint16())))
            } else if foreign == .espresenseReport || foreign == .gatewayAdvertisement {
                payload = foreignReport(espresense: foreign == .espresenseReport, from: &input)
            } else {
                payload = batch(node: node, from: &input, at: time)
            }
            let topic: String
            switch k & 3 {
            case 0: topic = topics.sightings(node: node)
            case 1: topic = topics.nodeStatus(node: node)
            case 2: topic = topics.nodeStats(node: node)
            default: topic = k & 0xC0 == 0x40 ? topics.healthPart(node) : foreign.topic(node: node)
            }
            // Through either entry, as the libmosquitto session's messages and a stream
            // subscriber's reads reach the core.
            if time & 1 == 0 {
                check(payload.withUnsafeBytes { core.receive(topic: topic, payload: $0, at: time) })
            } else {
                check(Array(topic.utf8).withUnsafeBytes { topic in payload.withUnsafeBytes { core.receive(topicBytes: topic, payload: $0, at: time) } })
            }
            if k & 0x80 != 0 { check(core.tick(at: time)) }
            _ = SightingBatchDecoder.decode(payload, topicNode: node)
            record(payload, topic: topic, at: time)
        }
        check(core.tick(at: TimeBounds.sum(time, 60_000)))
        check(core.finish(at: TimeBounds.sum(time, 60_000)))
        precondition(core.pipeline.nodeClocks.keys.allSatisfy { ["node-a", "node-b", "badge"].contains($0) }, "state kept for a stranger")
        precondition(core.pipeline.engine.nodeHealthCount <= 3, "health kept for a stranger")
        precondition(core.pipeline.strangers.recent.count <= StrangerNodes.capacity, "the stranger table grew past its capacity")
        let report = core.pipeline.fleet?.report(at: time)
        precondition(report?.nodes.allSatisfy { ["node-a", "node-b", "badge"].contains($0.key) } ?? false, "health kept for a stranger node")
        precondition(report?.tags.allSatisfy { $0.identity == tag } ?? false, "health kept for an unregistered identity")
    }

    /// What the core returns must hold together: exits have reasons, every message has a topic and
    /// an event's payload reads back as the event, every page update renders.
    private static func check(_ actions: [AggregatorCore.Action]) {
        for case .record(.decided(let decided)) in actions {
            precondition(decided.events.allSatisfy { $0.kind == .enter || $0.reason != nil }, "an exit without a reason")
            for message in decided.messages {
                precondition(!message.topic.isEmpty, "a message without a topic")
                if let event = message.event {
                    precondition((try? PresenceEvent(payload: message.payload))?.id == event.id, "an event's payload does not read back")
                }
            }
        }
        for case .page(let updates) in actions {
            precondition(updates.allSatisfy { $0 == .snapshot || $0.json?.first == UInt8(ascii: "{") }, "a page update that does not render")
        }
        for case .health(let report, _) in actions {
            precondition(report.encoded().first == UInt8(ascii: "{"), "a health report that does not render")
        }
    }

    /// A recorded line of the payload must read back its arrival and topic.
    private static func record(_ payload: [UInt8], topic: String, at time: Int64) {
        guard let line = Recording.line(payload: payload, topic: topic, received: time) else { return }
        line.withUnsafeBytes { line in
            let arrival = Recording.arrival(of: line)
            precondition(arrival == nil || arrival?.topic == topic, "a recorded line reads back another topic")
        }
    }

    /// A well-formed SightingBatch whose numbers and identities come from the input.
    private static func batch(node: String, from input: inout Cursor, at time: Int64) -> [UInt8] {
        let sent = input.byte().map { $0 & 1 == 0 ? TimeBounds.difference(time, Int64($0) * 100) : input.int64() } ?? time
        var text = #"{"v":1,"node":"\#(node)","seq":\#(input.byte() ?? 0),"sent":\#(sent),"sightings":["#
        for index in 0 ..< Int((input.byte() ?? 0) % 8) {
            let shape = input.byte() ?? 0
            let ts = shape & 1 == 0 ? TimeBounds.difference(time, Int64(shape) * 10) : input.int64()
            let id = identities[Int(shape >> 1) % identities.count]
            let rssi = Int(Int8(bitPattern: input.byte() ?? 0))
            text += (index > 0 ? "," : "") + #"{"ts":\#(ts),"id":"\#(id)","rssi":\#(rssi)"#
            if shape & 0x40 != 0 { text += #","tx":\#(Int(Int8(bitPattern: input.byte() ?? 0)))"# }
            if shape & 0x80 != 0 { text += #","tlm":{"batt":\#(input.uint16()),"temp":\#(Int8(bitPattern: input.byte() ?? 0)),"up":\#(input.int64())}"# }
            text += "}"
        }
        return Array((text + "]}").utf8)
    }

    /// What an "other" record's topic is: the node's name alone, or a foreign node's topic with it.
    enum ForeignTopic: Int {
        case none, espresenseReport, espresenseStatus, gatewayAdvertisement, gatewayStatus

        func topic(node: String) -> String {
            switch self {
            case .none: node
            case .espresenseReport: "espresense/devices/x/\(node)"
            case .espresenseStatus: "espresense/rooms/\(node)/status"
            case .gatewayAdvertisement: "home/\(node)/BTtoMQTT/x"
            case .gatewayStatus: "home/\(node)/LWT"
            }
        }
    }

    /// A foreign report of a well-formed shape whose identity spelling and numbers come from the input.
    private static func foreignReport(espresense: Bool, from input: inout Cursor) -> [UInt8] {
        let shape = input.byte() ?? 0
        let rssi = Int(Int8(bitPattern: input.byte() ?? 0))
        let power = Int(Int8(bitPattern: input.byte() ?? 0))
        let rssiText = shape & 0x08 != 0 ? "\(rssi).\(shape)" : "\(rssi)"
        if espresense {
            let ids = ["iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1", "iBeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e-2-\(shape)", "c47c8d6a2b01",
                       "irk:00112233", "eddy:0001020304040506070809-aabbccddeeff", "altBeacon:x-1-2"]
            let extra = shape & 0x10 != 0 ? #","raw":nan,"distance":inf,"var":-inf"# : #","distance":1.5"#
            return Array(#"{"id":"\#(ids[Int(shape) % ids.count])","rssi@1m":\#(power),"rssi":\#(rssiText)\#(extra)}"#.utf8)
        }
        let frames = [#""uuid":"e2c56db5dffb48d2b060d0f5a71096e0","major":1,"minor":\#(shape),"txpower":\#(power)"#,
                      #""manufacturerdata":"4c000215e2c56db5dffb48d2b060d0f5a71096e000010001c5""#,
                      #""servicedatauuid":"0xfeaa","servicedata":"00e800010203040506070809aabbccddeeff""#, #""txpower":\#(power)"#]
        return Array(#"{"id":"C4:7C:8D:6A:2B:01","rssi":\#(rssiText),\#(frames[Int(shape) % frames.count])}"#.utf8)
    }

    /// Reads the input front to back; past its end, bytes read as zero.
    struct Cursor {
        var bytes: ArraySlice<UInt8>

        mutating func byte() -> UInt8? {
            bytes.popFirst()
        }

        mutating func uint16() -> UInt16 {
            UInt16(byte() ?? 0) << 8 | UInt16(byte() ?? 0)
        }

        mutating func int64() -> Int64 {
            var value: UInt64 = 0
            for _ in 0 ..< 8 { value = value << 8 | UInt64(byte() ?? 0) }
            return Int64(bitPattern: value)
        }

        mutating func bytes(_ count: Int) -> ArraySlice<UInt8> {
            let taken = bytes.prefix(count)
            bytes = bytes.dropFirst(count)
            return taken
        }
    }
}
