import Foundation
import PresenceCore
import PresenceMQTT
import Testing

extension EndToEndTests {
    /// Nodes people already own: ESPresense rooms, OpenMQTTGateway and Theengs gateways hear one
    /// person each on the walk a native node hears another one on, through the real broker,
    /// aggregator and database, each publishing as its firmware does (one QoS 0 message per
    /// sighting, its own topics and identities). Everyone gets the native person's events.
    @Suite struct ForeignNodesTests {
        static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"

        /// Who is heard by which kind of node, with the identity registered for them.
        enum Walker: String, CaseIterable {
            case alice, bob, carol, dave, erin

            var identity: String {
                switch self {
                case .alice: "ibeacon:\(ForeignNodesTests.uuid):7:1"
                case .bob: "ibeacon:\(ForeignNodesTests.uuid):7:2"
                case .carol: "ibeacon:\(ForeignNodesTests.uuid):7:3"
                case .dave: "ibeacon:\(ForeignNodesTests.uuid):7:4"
                case .erin: "espresense:irk:00112233445566778899aabbccddeeff"
                }
            }

            /// The node that hears them at `booth` (a or b), as its topics name it, and its key.
            func node(at booth: String) -> (name: String, key: String) {
                switch self {
                case .alice: ("node-\(booth)", "node-\(booth)")
                case .bob, .erin: ("Room \(booth.uppercased())", "room-\(booth)")
                case .carol: ("gw-\(booth)", "gw-\(booth)")
                case .dave: ("TheengsGateway\(booth.uppercased())", "theengsgateway\(booth)")
                }
            }

            /// The message its node publishes when it hears them at `rssi`.
            func message(_ h: PipelineHarness, at booth: String, rssi: Int, seq: Int64) -> MQTTMessage {
                let node = node(at: booth).name
                let now = nowMilliseconds()
                switch self {
                case .alice:
                    let batch = SightingBatch(node: node, seq: seq, sent: now, sightings: [Sighting(ts: now, id: identity, rssi: rssi, tx: -59)])
                    return MQTTMessage(topic: h.topics.sightings(node: node), payload: batch.encoded(), qos: 1)
                case .bob:
                    let id = "iBeacon:\(ForeignNodesTests.uuid)-7-2"
                    return MQTTMessage(topic: "\(h.prefix)/espresense/devices/\(id)/\(node)", payload: Array("""
                        {"mac":"c47c8d6a2b02","id":"\(id)","idType":1,"rssi@1m":-59,"rssi":\(rssi),"raw":1.02,"distance":nan,"var":0.00,"int":102}
                        """.utf8), qos: 0)
                case .erin:
                    return MQTTMessage(topic: "\(h.prefix)/espresense/devices/irk:00112233445566778899aabbccddeeff/\(node)", payload: Array("""
                        {"mac":"4d2b6a8d7cc4","id":"irk:00112233445566778899aabbccddeeff","idType":60,"rssi@1m":-59,"rssi":\(Double(rssi) + 0.25),"raw":1.02,"distance":0.96,"var":0.01,"int":310}
                        """.utf8), qos: 0)
                case .carol:
                    return MQTTMessage(topic: "\(h.prefix)/omg/\(node)/BTtoMQTT/C47C8D6A2B03", payload: Array("""
                        {"id":"C4:7C:8D:6A:2B:03","mac_type":1,"rssi":\(rssi),"brand":"GENERIC","model":"iBeacon","model_id":"IBEACON","mfid":"4c00","uuid":"e2c56db5dffb48d2b060d0f5a71096e0","major":7,"minor":3,"txpower":-59}
                        """.utf8), qos: 0)
                case .dave:
                    return MQTTMessage(topic: "\(h.prefix)/theengs/\(node)/BTtoMQTT/C47C8D6A2B04", payload: Array("""
                        {"id": "C4:7C:8D:6A:2B:04", "rssi": \(rssi), "manufacturerdata": "4c000215e2c56db5dffb48d2b060d0f5a71096e000070004c5"}
                        """.utf8), qos: 0)
                }
            }
        }

        @Test func foreignNodesDecideAsNativeOnesAndTheirStatusCounts() async throws {
            let h = try PipelineHarness("foreign")
            try h.ctlOK("migrate")
            try h.ctlOK("venue", "add", "expo")
            for (index, booth) in ["a", "b"].enumerated() {
                try h.ctlOK("beacon", "add", "booth-\(booth)", "--venue", "expo", "--x", "\(index * 10)", "--y", "0")
                for walker in Walker.allCases where walker != .erin {
                    try h.ctlOK("node", "add", walker.node(at: booth).key, "--venue", "expo", "--beacon", "booth-\(booth)")
                }
            }
            try h.ctlOK("node", "add", "room-c", "--venue", "expo")
            for walker in Walker.allCases {
                try h.ctlOK("user", "add", walker.rawValue)
                try h.ctlOK("device", "add", walker.identity, "--user", walker.rawValue)
            }
            let bus = try await h.recorder()
            let aggregator = try h.startAggregator([
                "--espresense", "\(h.prefix)/espresense", "--openmqttgateway", "\(h.prefix)/omg", "--theengs", "\(h.prefix)/theengs",
                "--health-interval", "5s",
            ])
            try await bus.wait(15, for: "the aggregator's online status") { messages in
                messages.contains { $0.topic == h.topics.aggregatorStatus && $0.text.contains("\"online\"") }
            }
            let publisher = try await h.publisher()
            let roomC = "\(h.prefix)/espresense/rooms/room-c/status"
            try await publisher.publish(MQTTMessage(topic: roomC, payload: Array("online".utf8), qos: 0, retain: true))
            // An unregistered room, and a report no dialect can read: counted, nothing more.
            try await publisher.publish(MQTTMessage(topic: "\(h.prefix)/espresense/devices/x/Garage", payload: Array(#"{"id":"irk:00","rssi":-50}"#.utf8), qos: 0))
            try await publisher.publish(MQTTMessage(topic: "\(h.prefix)/omg/gw-a/BTtoMQTT/x", payload: Array(#"{"id":"C4:7C:8D:6A:2B:03","state":"offline"}"#.utf8), qos: 0))

            var random = RandomSource(seed: 22)
            var seq: Int64 = 0
            let t0 = nowMilliseconds()
            while nowMilliseconds() - t0 < 20_000 {
                let near = nowMilliseconds() - t0 < 10_000 ? "a" : "b"
                seq += 1
                for booth in ["a", "b"] {
                    let rssi = (booth == near ? -55 : -80) + Int(random.next() % 5) - 2
                    for walker in Walker.allCases { try await publisher.publish(walker.message(h, at: booth, rssi: rssi, seq: seq)) }
                }
                try await Task.sleep(for: .milliseconds(500))
            }
            // room-c goes: its will, as the broker publishes it.
            try await publisher.publish(MQTTMessage(topic: roomC, payload: Array("offline".utf8), qos: 0, retain: true))

            let eventTopic = "\(h.prefix)/v1/events/"
            try await bus.wait(40, for: "everyone's timeout exit at booth-b") { messages in
                Walker.allCases.allSatisfy { walker in
                    messages.contains { $0.topic == "\(eventTopic)booth-b/\(walker.rawValue)" && $0.text.contains("\"timeout\"") }
                }
            }
            let events = bus.objects(on: eventTopic)
            func summary(_ walker: Walker) -> [String] {
                events.filter { $0["user"] as? String == walker.rawValue }.map { "\($0["event"] ?? "") \($0["beacon"] ?? "") \($0["reason"] ?? "-")" }
            }
            func at(_ walker: Walker) -> [Int64] {
                events.filter { $0["user"] as? String == walker.rawValue }.map { ($0["at"] as? NSNumber)?.int64Value ?? 0 }
            }
            #expect(summary(.alice) == ["enter booth-a -", "exit booth-a moved", "enter booth-b -", "exit booth-b timeout"])
            for walker in Walker.allCases where walker != .alice {
                #expect(summary(walker) == summary(.alice), "\(walker)")
                // Published moments apart, decided on the same 100 ms grid.
                #expect(zip(at(walker), at(.alice)).allSatisfy { abs($0 - $1) <= 1_000 }, "\(walker): \(at(walker)) against \(at(.alice))")
                let device = events.first { $0["user"] as? String == walker.rawValue }?["device"] as? String
                #expect(device == walker.identity)
            }
            let sessions = try h.rows("SELECT user_key, count(*), min(device) FROM presence.sessions_v GROUP BY user_key ORDER BY user_key")
            #expect(sessions == Walker.allCases.map { "\($0.rawValue)|2|\($0.identity)" })

            // The venue's health: the rooms and gateways that spoke are online, room-c offline.
            func nodes() -> [[String: Any]] {
                (bus.objects(on: h.topics.health).last?["nodes"] as? [[String: Any]]) ?? []
            }
            try? await eventually(15, "a health report with room-c offline") {
                nodes().contains { $0["node"] as? String == "room-c" && $0["state"] as? String == "offline" }
            }
            let nodes = nodes()
            #expect(nodes.contains { $0["node"] as? String == "room-c" && $0["state"] as? String == "offline" },
                    "\(bus.messages(on: h.topics.health).last?.text ?? "no health report")")
            let problems = (bus.objects(on: h.topics.health).last?["problems"] as? [[String: Any]]) ?? []
            #expect(problems.contains { $0["kind"] as? String == "node_down" && $0["node"] as? String == "room-c" }, "\(problems)")
            let online = Set(nodes.filter { $0["state"] as? String == "online" }.compactMap { $0["node"] as? String })
            #expect(online.isSuperset(of: ["room-a", "room-b", "gw-a", "gw-b", "theengsgatewaya", "theengsgatewayb"]), "\(nodes)")
            let stats = bus.objects(on: h.topics.aggregatorStats).last
            #expect((stats?["strangers"] as? [String: Any])?["unregistered_node"] as? Int == 1, "\(stats ?? [:])")
            #expect((stats?["rejected_batches"] as? [String: Any])?["no_rssi"] as? Int == 1, "\(stats ?? [:])")
            try await publisher.publish(MQTTMessage(topic: roomC, payload: [], qos: 0, retain: true))
            await publisher.stop()
            #expect(await aggregator.stop() == 0, "\(aggregator.stderr.suffix(2_000))")
            await bus.stop()
        }
    }
}
