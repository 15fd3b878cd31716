import Foundation
import PresenceCore
import PresenceMQTT
import Testing

extension EndToEndTests {
    /// `presence-scanner --simulate` feeding the aggregator, whole and in four shards; every payload
    /// on the wire is checked against the JSON Schemas in schemas/json.
    @Suite struct SimulatedVenueTests {
        static let scenario = """
            {
              "venue": "mini",
              "seed": 5,
              "radio": {"packetLoss": 0.1, "shadowingSigma": 2, "fadingSigma": 1, "advertisingInterval": "500ms"},
              "beacons": [{"key": "stand-a", "x": 0, "y": 0}, {"key": "stand-b", "x": 12, "y": 0}],
              "nodes": [{"key": "sim-a", "x": 0, "y": 0, "beacon": "stand-a"}, {"key": "sim-b", "x": 12, "y": 0, "beacon": "stand-b"}],
              "people": [{"user": "sam", "device": "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:3:3", "arrive": "1s",
                          "entrance": {"x": 6, "y": 9}, "speed": 3,
                          "stops": [{"beacon": "stand-a", "dwell": "8s", "offset": 0.5}, {"beacon": "stand-b", "dwell": "8s", "offset": 0.5}]}]
            }
            """

        /// Registers the scenario's venue: stands a and b in one hall, each with its node, and sam's tag.
        static func register(_ h: PipelineHarness) throws {
            try h.ctlOK("migrate")
            try h.ctlOK("venue", "add", "mini")
            try h.ctlOK("zone", "add", "hall", "--venue", "mini")
            for key in ["a", "b"] {
                try h.ctlOK("beacon", "add", "stand-\(key)", "--venue", "mini", "--zone", "hall", "--goodbye", "See you, {name}")
                try h.ctlOK("node", "add", "sim-\(key)", "--venue", "mini", "--beacon", "stand-\(key)", "--x", key == "a" ? "0" : "12", "--y", "0")
            }
            try h.ctlOK("user", "add", "sam")
            try h.ctlOK("device", "add", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:3:3", "--user", "sam")
        }

        @Test(arguments: [1, 4])
        func aSimulatedVisitMakesEventsAndEveryPayloadMatchesItsSchema(shards: Int) async throws {
            let h = try PipelineHarness("simulated")
            try Self.register(h)
            #expect(try h.ctlOK("shards", "--set", "\(shards)") == "\(shards) shard\(shards == 1 ? "" : "s")\n")
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("mini-\(h.prefix).json")
            try Self.scenario.write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }

            let bus = try await h.recorder()
            let aggregator = try h.startAggregator(["--absence-timeout", "4s"])
            // The aggregator publishes the shard count, retained, where the nodes read it.
            try await bus.wait(20, for: "the venue's configuration") { messages in
                messages.contains { $0.topic == h.topics.config && $0.text == #"{"v":1,"shards":\#(shards)}"# }
            }
            let scanner = try ChildProcess.spawn(try PackagePaths.executable("presence-scanner"), ["--simulate", file.path], environment: h.environment)
            try await bus.wait(60, for: "sam to leave stand-b") { messages in
                messages.contains { $0.topic == h.topics.event(beacon: "stand-b", user: "sam") && $0.text.contains("\"exit\"") }
            }
            let events = bus.objects(on: "\(h.prefix)/v1/events/").map { "\($0["event"] ?? "") \($0["beacon"] ?? "")" }
            #expect(events == ["enter stand-a", "exit stand-a", "enter stand-b", "exit stand-b"])
            let positions = bus.objects(on: h.topics.userState("sam")).compactMap { $0["position"] as? [String: Any] }
            #expect(!positions.isEmpty, "no user state carried a position")
            #expect(positions.allSatisfy { (($0["x"] as? Double) ?? -99) > -2 && (($0["x"] as? Double) ?? 99) < 14 })
            // Batches travel whole with one shard; with four, each part on its shard's topic holds
            // only the devices of that shard (a node's first batches may leave before it has read
            // the count).
            let batches = bus.messages.filter { $0.topic.hasPrefix("\(h.prefix)/v1/sightings/") }
            let levels = h.prefix.split(separator: "/").count
            func isPart(_ message: MQTTMessage) -> Bool { message.topic.split(separator: "/").count == levels + 4 }
            let parts = batches.filter(isPart)
            if shards == 1 {
                #expect(!batches.isEmpty && parts.isEmpty, "a batch was split with one shard")
            } else {
                #expect(parts.count > 10 && batches.drop { !isPart($0) }.allSatisfy(isPart),
                        "\(parts.count) parts; whole batches after the first part: \(batches.drop { !isPart($0) }.filter { !isPart($0) }.count)")
                for part in parts {
                    let shard = Int(part.topic.split(separator: "/").last ?? "") ?? -1
                    let sightings = (try? JSONSerialization.jsonObject(with: Data(part.payload)) as? [String: Any])?["sightings"] as? [[String: Any]] ?? []
                    #expect((0 ..< shards).contains(shard))
                    #expect(sightings.allSatisfy { Int(Shards.fnv1a32($0["id"] as? String ?? "") % UInt32(shards)) == shard }, "\(part.topic)")
                }
            }
            #expect(await scanner.stop() == 0, "scanner: \(scanner.stderr.suffix(1500))")
            try await bus.wait(5, for: "the nodes' offline status") { messages in
                ["sim-a", "sim-b"].allSatisfy { node in messages.last { $0.topic == h.topics.nodeStatus(node: node) }?.text.contains("\"offline\"") == true }
            }
            #expect(await aggregator.stop() == 0)
            await bus.stop()

            let capture = FileManager.default.temporaryDirectory.appendingPathComponent("capture-\(h.prefix).jsonl")
            defer { try? FileManager.default.removeItem(at: capture) }
            let lines = bus.messages.map { message -> String in
                let object: [String: String] = ["topic": message.topic, "payload": message.text]
                return String(decoding: (try? JSONSerialization.data(withJSONObject: object)) ?? Data(), as: UTF8.self)
            }
            try (lines.joined(separator: "\n") + "\n").write(to: capture, atomically: true, encoding: .utf8)
            let script = PackagePaths.root.appendingPathComponent("schemas/validate-payloads.py").path
            let validation = try ChildProcess.spawn("/usr/bin/env", ["python3", script, capture.path])
            #expect(await validation.wait() == 0, "\(validation.stdout)")
            for schema in ["sighting-batch", "node-status", "presence-event", "user-state", "beacon-state", "aggregator-status", "aggregator-stats",
                           "notification", "node-stats", "health", "config", "zone-event", "zone-state"] {
                #expect(validation.stdout.contains("\(schema)="), "no \(schema) payload was checked: \(validation.stdout)")
            }

            // The validator can fail: an event without its id does not pass.
            let broken = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(h.prefix).jsonl")
            defer { try? FileManager.default.removeItem(at: broken) }
            try #"{"topic":"p/v1/events/b/u","payload":"{\"v\":1,\"event\":\"enter\",\"user\":\"u\",\"device\":\"d\",\"beacon\":\"b\",\"venue\":null,\"at\":1}"}"#
                .appending("\n").write(to: broken, atomically: true, encoding: .utf8)
            let refused = try ChildProcess.spawn("/usr/bin/env", ["python3", script, broken.path])
            #expect(await refused.wait() == 1)
            #expect(refused.stdout.contains("'id' is a required property"))
        }
    }
}
