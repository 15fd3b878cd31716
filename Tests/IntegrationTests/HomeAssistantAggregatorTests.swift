import Foundation
import PresenceCore
import PresenceMQTT
import Testing

/// `presence-aggregator --ha-discovery` against the real broker and database: a user's tracker
/// config is retained, its state follows a walk (the beacon key, then `not_home` after the
/// absence timeout) with the attributes Home Assistant shows, and `presencectl user rm` clears it.
/// The discovery prefix sits under the harness's prefix, so that the shared broker keeps tests apart.
@Suite struct HomeAssistantAggregatorTests {
    static let tag = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:1"

    /// The retained messages under `filter`, as a subscriber arriving now sees them.
    static func retained(_ h: PipelineHarness, _ filter: String) async throws -> [MQTTMessage] {
        let late = try BusRecorder(url: h.brokerURL, filter: filter)
        try await late.start()
        try await Task.sleep(for: .seconds(1))
        await late.stop()
        return late.messages.filter(\.retain)
    }

    @Test func aUsersTrackerFollowsAWalkAndGoesWithTheUser() async throws {
        let h = try PipelineHarness("ha")
        try await h.ctlOKAsync("migrate")
        try await h.ctlOKAsync("venue", "add", "expo", "--name", "Expo")
        for booth in ["a", "b"] {
            try await h.ctlOKAsync("beacon", "add", "booth-\(booth)", "--venue", "expo", "--name", "Booth \(booth.uppercased())")
            try await h.ctlOKAsync("node", "add", "node-\(booth)", "--venue", "expo", "--beacon", "booth-\(booth)")
        }
        try await h.ctlOKAsync("zone", "add", "hall", "--venue", "expo", "--name", "Main hall")
        try await h.ctlOKAsync("beacon", "add", "booth-a", "--zone", "hall")
        try await h.ctlOKAsync("user", "add", "alice", "--name", "Alice")
        try await h.ctlOKAsync("device", "add", Self.tag, "--user", "alice")
        let prefix = "\(h.prefix)/ha"
        let assistant = try HomeAssistantTopics(prefix: prefix)
        let bus = try await h.recorder()
        let aggregator = try h.startAggregator(["--ha-discovery", "--ha-prefix", prefix, "--absence-timeout", "4s"])
        try await bus.wait(20, for: "alice's tracker config and booth-a's sensor config") { messages in
            messages.contains { $0.topic == assistant.trackerConfig("alice") } && messages.contains { $0.topic == assistant.sensorConfig("booth-a") }
        }

        // The configs are retained: Home Assistant, starting later, still finds them.
        let retained = try await Self.retained(h, "\(prefix)/#")
        let config = try #require(retained.last { $0.topic == assistant.trackerConfig("alice") })
        let tracker = try #require(try JSONSerialization.jsonObject(with: Data(config.payload)) as? [String: Any])
        #expect(tracker["state_topic"] as? String == assistant.trackerState("alice"))
        #expect(tracker["availability_topic"] as? String == h.topics.aggregatorStatus)
        #expect((tracker["device"] as? [String: Any])?["name"] as? String == "Alice")
        #expect(retained.last { $0.topic == assistant.trackerState("alice") }?.text == "not_home")
        let sensor = try #require(retained.last { $0.topic == assistant.sensorConfig("booth-a") }.flatMap {
            try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]
        })
        #expect(sensor["state_topic"] as? String == h.topics.beaconState("booth-a"))
        // The hall: how many are in it, and whether anyone is.
        let zoneConfigs = [assistant.zoneCountConfig("hall"), assistant.zoneOccupancyConfig("hall")].map { topic in
            retained.last { $0.topic == topic }.flatMap { try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any] } ?? [:]
        }
        #expect(zoneConfigs.allSatisfy { $0["state_topic"] as? String == h.topics.zoneState("hall") }, "\(zoneConfigs)")
        #expect(zoneConfigs[1]["device_class"] as? String == "occupancy" && (zoneConfigs[0]["device"] as? [String: Any])?["name"] as? String == "Main hall")
        #expect(zoneConfigs[0]["unique_id"] as? String != zoneConfigs[1]["unique_id"] as? String)

        // Alice stands at booth A for a few seconds, then leaves.
        let publisher = try await h.publisher()
        var seq: Int64 = 0
        for _ in 0 ..< 12 {
            seq += 1
            let ts = nowMilliseconds()
            try await publisher.publish(SightingBatch(node: "node-a", seq: seq, sent: ts, sightings: [Sighting(ts: ts, id: Self.tag, rssi: -55, tx: -59)]),
                                        topics: h.topics)
            try await Task.sleep(for: .milliseconds(400))
        }
        try await bus.wait(20, for: "alice's tracker at booth-a") { messages in
            messages.contains { $0.topic == assistant.trackerState("alice") && $0.text == "booth-a" }
        }
        let attributes = try #require(bus.objects(on: assistant.trackerAttributes("alice")).last { $0["beacon"] as? String == "booth-a" })
        #expect(attributes["beacon_name"] as? String == "Booth A" && attributes["venue"] as? String == "expo" && attributes["venue_name"] as? String == "Expo")
        #expect(((attributes["distance"] as? Double) ?? 99) < 3 && ["immediate", "near"].contains(attributes["proximity"] as? String ?? ""))
        // The stay the attributes describe began with the last enter (a loaded machine may time out and re-enter).
        let enter = try #require(bus.objects(on: "\(h.prefix)/v1/events/booth-a/alice").last { $0["event"] as? String == "enter" })
        #expect(attributes["since"] as? String == ISO8601Text.string(milliseconds: (enter["at"] as? NSNumber)?.int64Value ?? 0))
        try await bus.wait(30, for: "alice's tracker back to not_home after the absence timeout") { messages in
            messages.last { $0.topic == assistant.trackerState("alice") }?.text == "not_home"
        }
        let away = try #require(bus.objects(on: assistant.trackerAttributes("alice")).last)
        #expect(away["beacon"] is NSNull && away["since"] is String)
        #expect(bus.objects(on: h.topics.zoneState("hall")).map { $0["count"] as? Int } .suffix(2) == [1, 0], "the sensors' state: in the hall, then not")

        // A zone removed takes its sensors with it.
        try await h.ctlOKAsync("zone", "rm", "hall")
        try await bus.wait(20, for: "the hall's sensors cleared") { messages in
            [assistant.zoneCountConfig("hall"), assistant.zoneOccupancyConfig("hall")].allSatisfy { topic in
                messages.last { $0.topic == topic }?.payload.isEmpty == true
            }
        }

        // Removing the user clears the tracker: the config first, then its state and attributes.
        let before = bus.messages.count
        try await h.ctlOKAsync("user", "rm", "alice")
        try await bus.wait(20, for: "alice's tracker cleared") { messages in
            messages.dropFirst(before).contains { $0.topic == assistant.trackerAttributes("alice") && $0.payload.isEmpty }
        }
        // (A loaded machine may still deliver the end of the walk first.)
        let published = bus.messages.dropFirst(before).filter { $0.topic.hasPrefix("\(prefix)/") }
        let removal = published.drop { !($0.topic == assistant.trackerConfig("alice") && $0.payload.isEmpty) }
        #expect(removal.map(\.topic) == assistant.userTopics("alice") && removal.allSatisfy { $0.payload.isEmpty },
                "\(published.map { "\($0.topic) \($0.text)" })")
        let after = try await Self.retained(h, "\(prefix)/#")
        #expect(!after.contains { $0.topic.contains("presence_alice") }, "\(after.map(\.topic))")
        #expect(after.contains { $0.topic == assistant.sensorConfig("booth-b") })

        #expect(await aggregator.stop() == 0, "aggregator log: \(aggregator.stderr.suffix(2000))")
        await publisher.stop()
        await bus.stop()
        try await Self.validate(bus.messages, h)
    }

    /// Every payload published checks against `schemas/json`, the Home Assistant ones included.
    static func validate(_ messages: [MQTTMessage], _ h: PipelineHarness) async throws {
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("ha-capture-\(h.prefix).jsonl")
        defer { try? FileManager.default.removeItem(at: capture) }
        let lines = messages.map { message in
            String(decoding: (try? JSONSerialization.data(withJSONObject: ["topic": message.topic, "payload": message.text])) ?? Data(), as: UTF8.self)
        }
        try (lines.joined(separator: "\n") + "\n").write(to: capture, atomically: true, encoding: .utf8)
        let script = PackagePaths.root.appendingPathComponent("schemas/validate-payloads.py").path
        let validation = try ChildProcess.spawn("/usr/bin/env", ["python3", script, capture.path])
        #expect(await validation.wait() == 0, "\(validation.stdout)")
        for schema in ["ha-tracker-config", "ha-sensor-config", "ha-tracker-state", "ha-tracker-attributes", "ha-binary-sensor-config", "zone-state"] {
            #expect(validation.stdout.contains("\(schema)="), "no \(schema) payload was checked: \(validation.stdout)")
        }
    }
}
