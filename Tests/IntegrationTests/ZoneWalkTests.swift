import Foundation
import PresenceCore
import PresenceMQTT
import Testing

extension EndToEndTests {
    /// Zones against the real executables, broker and database: alice walks desk 1 → desk 2 → out
    /// of an office on a floor while bob stays at a booth in a hall on another floor, and the
    /// aggregator is stopped and started again in the middle.
    @Suite struct ZoneWalkTests {
        static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
        static let alice = "ibeacon:\(uuid):7:1"
        static let bob = "ibeacon:\(uuid):7:2"

        static func register(_ h: PipelineHarness) throws {
            try h.ctlOK("migrate")
            try h.ctlOK("venue", "add", "hq")
            try h.ctlOK("zone", "add", "floor-1", "--venue", "hq", "--name", "First floor")
            try h.ctlOK("zone", "add", "office", "--venue", "hq", "--parent", "floor-1")
            try h.ctlOK("zone", "add", "floor-2", "--venue", "hq")
            try h.ctlOK("zone", "add", "hall-b", "--venue", "hq", "--parent", "floor-2")
            for (beacon, zone) in [("desk-1", "office"), ("desk-2", "office"), ("booth-12", "hall-b")] {
                try h.ctlOK("beacon", "add", beacon, "--venue", "hq", "--zone", zone)
                try h.ctlOK("node", "add", "node-\(beacon)", "--venue", "hq", "--beacon", beacon)
            }
            for (user, tag) in [("alice", alice), ("bob", bob)] {
                try h.ctlOK("user", "add", user)
                try h.ctlOK("device", "add", tag, "--user", user)
            }
        }

        @Test func deskToDeskKeepsTheOfficeEveryLevelGetsOneSessionAndARestartChangesNothing() async throws {
            let h = try PipelineHarness("zones")
            try Self.register(h)
            let recording = FileManager.default.temporaryDirectory.appendingPathComponent("zones-\(h.prefix).jsonl").path
            defer { try? FileManager.default.removeItem(atPath: recording) }
            let recorder = try ChildProcess.spawn(try PackagePaths.executable("presencectl"), ["record", "--out", recording], environment: h.environment)
            let bus = try await h.recorder()
            let flags = ["--absence-timeout", "4s"]
            var aggregator = try h.startAggregator(flags)
            try await bus.wait(15, for: "the aggregator's online status") { messages in
                messages.contains { $0.topic == h.topics.aggregatorStatus && $0.text.contains("\"online\"") }
            }
            let publisher = try await h.publisher()
            var seq: Int64 = 0
            var restarted = false
            var lastHeard: [String: Int64] = [:]
            let t0 = nowMilliseconds()
            while nowMilliseconds() - t0 < 18_000 {
                let elapsed = nowMilliseconds() - t0
                if elapsed >= 8_000, !restarted {
                    restarted = true
                    #expect(await aggregator.stop() == 0)
                    try await Task.sleep(for: .seconds(1))
                    aggregator = try h.startAggregator(flags)
                }
                // At desk 2 she walks slowly away from its node: -52 dBm to -64.
                let aliceAt = elapsed < 9_000 ? "desk-1" : "desk-2"
                let atDesk2 = -52 - Int(max(0, elapsed - 9_000) / 750)
                let heard: [(node: String, tag: String, rssi: Int)] = [
                    ("node-desk-1", Self.alice, aliceAt == "desk-1" ? -55 : -78), ("node-desk-2", Self.alice, aliceAt == "desk-2" ? atDesk2 : -78),
                    ("node-booth-12", Self.bob, -56),
                ]
                for (node, tag, rssi) in heard {
                    seq += 1
                    let ts = nowMilliseconds()
                    try await publisher.publish(SightingBatch(node: node, seq: seq, sent: ts, sightings: [Sighting(ts: ts, id: tag, rssi: rssi, tx: -59)]),
                                                topics: h.topics)
                    if rssi > -70 { lastHeard[tag] = ts }
                }
                try await Task.sleep(for: .milliseconds(400))
            }
            // Still there for a few seconds (the absence timeout): who is in the office, and at which desk.
            let present = try h.ctlOK("presence", "--zone", "office", "--csv")
            #expect(present.hasPrefix("user,zone,venue,since,beacon\r\nalice,office,hq,") && present.hasSuffix(",desk-2\r\n"), "\(present)")
            let zoneTopic = "\(h.prefix)/v1/zones/events/"
            try await bus.wait(30, for: "every zone's exit") { messages in
                messages.filter { $0.topic.hasPrefix(zoneTopic) && $0.text.contains("\"exit\"") && $0.text.contains("\"timeout\"") }.count == 4
            }
            let eventTopic = "\(h.prefix)/v1/events/"
            func walk(of user: String) -> [String] {
                bus.messages.filter { ($0.topic.hasPrefix(zoneTopic) || $0.topic.hasPrefix(eventTopic)) && $0.topic.hasSuffix("/\(user)") }.compactMap { message in
                    guard let object = (try? JSONSerialization.jsonObject(with: Data(message.payload))) as? [String: Any] else { return nil }
                    let place = (object["zone"] as? String).map { "zone \($0)" } ?? "\(object["beacon"] ?? "")"
                    return "\(object["event"] ?? "") \(place)\((object["reason"] as? String).map { " " + $0 } ?? "")"
                }
            }
            #expect(walk(of: "alice") == [
                "enter zone floor-1", "enter zone office", "enter desk-1", "exit desk-1 moved", "enter desk-2",
                "exit desk-2 timeout", "exit zone office timeout", "exit zone floor-1 timeout",
            ])
            #expect(walk(of: "bob") == ["enter zone floor-2", "enter zone hall-b", "enter booth-12", "exit booth-12 timeout",
                                        "exit zone hall-b timeout", "exit zone floor-2 timeout"])
            // Her retained state's distance follows her away from desk 2. Her reading there jumps
            // 26 dB, and a quick move may be published while the smoothed reading still climbs to
            // it (a distance a little shorter next): from the nearest she is shown, it only grows.
            let distances = bus.objects(on: h.topics.userState("alice")).filter { $0["beacon"] as? String == "desk-2" }.compactMap { $0["distance"] as? Double }
            let away = distances.firstIndex(of: distances.min() ?? 0).map { Array(distances[$0...]) } ?? []
            #expect(Set(away).count >= 3 && (away.last ?? 0) > 1.5 * (away.first ?? .infinity) && away == away.sorted(), "\(distances)")
            let zoneEvents = bus.objects(on: zoneTopic)
            let bobExits = zoneEvents.filter { $0["user"] as? String == "bob" && $0["event"] as? String == "exit" }
            #expect(bobExits.allSatisfy { ($0["at"] as? Int).map(Int64.init) == lastHeard[Self.bob] }, "bob's zones end at his last sighting")

            // Zone sessions, one per stay at every level, each spanning its beacons' sessions.
            try await eventually(10, "every zone session closed in the database") {
                (try? h.rows("SELECT count(*) FROM presence.zone_sessions WHERE exited_at IS NOT NULL")) == ["4"]
            }
            #expect(try h.rows("""
                SELECT user_key, zone_key, exit_reason, venue_key FROM presence.zone_sessions_v ORDER BY user_key, entered_at, zone_key
                """) == ["alice|floor-1|timeout|hq", "alice|office|timeout|hq", "bob|floor-2|timeout|hq", "bob|hall-b|timeout|hq"])
            #expect(try h.rows("SELECT user_key, beacon_key, exit_reason FROM presence.sessions_v ORDER BY user_key, entered_at")
                == ["alice|desk-1|moved", "alice|desk-2|timeout", "bob|booth-12|timeout"])
            #expect(try h.rows("""
                SELECT count(*) FROM presence.zone_sessions z
                WHERE z.entered_at = (SELECT min(entered_at) FROM presence.sessions s WHERE s.user_key = z.user_key)
                  AND z.exited_at = (SELECT max(exited_at) FROM presence.sessions s WHERE s.user_key = z.user_key)
                """) == ["4"], "each zone session runs from its first beacon's enter to its last beacon's exit")
            #expect(try h.rows("SELECT count(*) FROM presence.zone_present_v") == ["0"])
            let stays = try h.ctlOK("sessions", "--zone", "office", "--json")
            #expect(stays.split(separator: "\n").count == 1 && stays.contains(#""zone":"office""#) && stays.contains(#""reason":"timeout""#), "\(stays)")
            let visits = try h.ctlOK("visits", "--zone", "hall-b", "--bucket", "1h", "--csv")
            #expect(visits.hasPrefix("zone,bucket_start,unique_users\r\nhall-b,") && visits.hasSuffix(",1\r\n"), "\(visits)")
            #expect(try h.ctl(["sessions", "--zone", "office", "--beacon", "desk-1"]).status != 0)

            // Retained zone states, as a subscriber arriving now sees them.
            let late = try BusRecorder(url: h.brokerURL, filter: "\(h.prefix)/v1/zones/state/#")
            try await late.start()
            try await late.wait(5, for: "retained zone states") { $0.count >= 4 }
            for zone in ["floor-1", "office", "floor-2", "hall-b"] {
                #expect(late.objects(on: h.topics.zoneState(zone)).last?["count"] as? Int == 0, "\(zone)")
            }
            await late.stop()

            // The recording replays to the very zone events, ids included. (The beacons' move is dated
            // a little differently: the restarted aggregator's smoothing started afresh, the replay's did not.)
            #expect(await recorder.stop() == 0)
            let replay = try h.ctl(["replay", recording, "--print", "zone-events"] + flags)
            #expect(replay.status == 0, "\(replay.stderr)")
            #expect(replay.stdout.split(separator: "\n").map(String.init) == bus.messages(on: zoneTopic).map(\.text))
            let all = try h.ctl(["replay", recording, "--print", "all-events"] + flags)
            #expect(all.stdout.split(separator: "\n").compactMap { line in
                ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]).map { "\($0["event"] ?? "") \($0["zone"] ?? $0["beacon"] ?? "")" }
            }.prefix(3) == ["enter floor-1", "enter office", "enter desk-1"], "all-events interleaves them as published")
            #expect(await aggregator.stop() == 0)
            await bus.stop()
            await publisher.stop()
        }
    }
}
