import Foundation
import PresenceCore
import PresenceMQTT
import Testing

extension EndToEndTests {
    /// A tag walks past nodes anchored at booths A, B and C and leaves, with the contract's default
    /// timings, against the real executables, broker and database.
    @Suite struct AggregatorWalkTests {
        static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
        static let tag = "ibeacon:\(uuid):7:1"

        /// Registers venue expo with booths a, b, c (each with its anchored node) and alice's tag.
        static func register(_ h: PipelineHarness) throws {
            try h.ctlOK("migrate")
            try h.ctlOK("venue", "add", "expo", "--name", "Expo")
            for (index, booth) in ["a", "b", "c"].enumerated() {
                try h.ctlOK("beacon", "add", "booth-\(booth)", "--venue", "expo", "--x", "\(index * 7)", "--y", "0")
                try h.ctlOK("node", "add", "node-\(booth)", "--venue", "expo", "--beacon", "booth-\(booth)", "--x", "\(index * 7)", "--y", "0")
            }
            try h.ctlOK("beacon", "add", "booth-b", "--hello", "Welcome to {beacon}, {name}!", "--name", "Booth B")
            try h.ctlOK("user", "add", "alice", "--name", "Alice")
            try h.ctlOK("device", "add", tag, "--user", "alice")
        }

        @Test func walkPastThreeBoothsAndLeave() async throws {
            let h = try PipelineHarness("walk")
            try Self.register(h)
            let recording = FileManager.default.temporaryDirectory.appendingPathComponent("walk-\(h.prefix).jsonl").path
            let recorder = try ChildProcess.spawn(try PackagePaths.executable("presencectl"), ["record", "--out", recording], environment: h.environment)
            let bus = try await h.recorder()
            let port = try freePort()
            let assistant = "\(h.prefix)/ha"
            let aggregator = try h.startAggregator(["--ha-discovery", "--ha-prefix", assistant, "--http", "127.0.0.1:\(port)"])
            try await bus.wait(15, for: "the aggregator's online status") { messages in
                messages.contains { $0.topic == h.topics.aggregatorStatus && $0.text.contains("\"online\"") }
            }
            let publisher = try await h.publisher()

            var random = RandomSource(seed: 3)
            var seq: [String: Int64] = [:]
            var lastAtC: Int64 = 0
            let t0 = nowMilliseconds()
            while nowMilliseconds() - t0 < 30_000 {
                let elapsed = nowMilliseconds() - t0
                let near = elapsed < 10_000 ? "a" : elapsed < 20_000 ? "b" : "c"
                for booth in ["a", "b", "c"] {
                    let node = "node-\(booth)"
                    let ts = nowMilliseconds()
                    seq[node, default: 0] += 1
                    let rssi = (booth == near ? -55 : -80) + Int(random.next() % 5) - 2
                    try await publisher.publish(SightingBatch(node: node, seq: seq[node] ?? 0, sent: ts,
                                                              sightings: [Sighting(ts: ts, id: Self.tag, rssi: rssi, tx: -59)]), topics: h.topics)
                    if booth == "c" { lastAtC = ts }
                }
                try await Task.sleep(for: .milliseconds(500))
            }
            let eventTopic = "\(h.prefix)/v1/events/"
            try await bus.wait(40, for: "the timeout exit at booth-c") { messages in
                messages.contains { $0.topic == "\(eventTopic)booth-c/alice" && $0.text.contains("\"timeout\"") }
            }
            let liveFeed = try await httpGet("http://127.0.0.1:\(port)/api/events?after=0&limit=1000")
            #expect(liveFeed.status == 200 && liveFeed.body.contains(#""reason":"timeout""#), "\(liveFeed.body)")
            let events = bus.objects(on: eventTopic)
            let summary = events.map { "\($0["event"] ?? "") \($0["beacon"] ?? "") \($0["reason"] ?? "-")" }
            #expect(summary == ["enter booth-a -", "exit booth-a moved", "enter booth-b -", "exit booth-b moved", "enter booth-c -", "exit booth-c timeout"])
            guard events.count == 6 else { return }
            let at = events.map { ($0["at"] as? Int64) ?? Int64(($0["at"] as? Int) ?? 0) }
            #expect(at[0] - t0 <= 3_000, "enter decided \(at[0] - t0) ms after arrival")
            #expect(at[1] == at[2] && at[3] == at[4], "a move's exit and enter share 'at'")
            #expect((10_000 ... 16_000).contains(at[2] - t0), "move to b decided at +\(at[2] - t0) ms")
            #expect((20_000 ... 26_000).contains(at[4] - t0), "move to c decided at +\(at[4] - t0) ms")
            #expect(at[5] == lastAtC, "timeout exit at \(at[5]), last sighting at c \(lastAtC)")
            for event in events {
                #expect(event["v"] as? Int == 1 && event["user"] as? String == "alice" && event["device"] as? String == Self.tag)
                #expect(event["venue"] as? String == "expo" && (event["id"] as? String)?.count == 36)
            }
            for enter in [events[0], events[2], events[4]] {
                #expect(enter["rssi"] is Double || enter["rssi"] is Int)
                #expect(["immediate", "near", "far"].contains(enter["proximity"] as? String ?? ""))
                #expect(((enter["distance"] as? Double) ?? 99) < 3)
            }
            for (index, exit) in [events[1], events[3], events[5]].enumerated() {
                #expect(exit["entered"] as? Int == Int(at[index * 2]))
                #expect(abs(((exit["dwell"] as? Double) ?? -1) - Double(at[index * 2 + 1] - at[index * 2]) / 1000) < 0.006)
            }
            #expect(Set(events.compactMap { $0["id"] as? String }).count == 6)
            let hello = bus.objects(on: h.topics.notify(user: "alice"))
            #expect(hello.count == 1 && hello.first?["message"] as? String == "Welcome to Booth B, Alice!")
            #expect(hello.first?["kind"] as? String == "hello" && hello.first?["beacon"] as? String == "booth-b")
            #expect(hello.first?["at"] as? Int == Int(at[2]))

            // Retained state, as a subscriber arriving now sees it.
            let late = try BusRecorder(url: h.brokerURL, filter: "\(h.prefix)/v1/state/#")
            try await late.start()
            try await late.wait(5, for: "retained states") { $0.count >= 4 }
            let userState = late.objects(on: h.topics.userState("alice")).last
            #expect(userState?["beacon"] is NSNull && userState?["user"] as? String == "alice")
            for booth in ["booth-a", "booth-b", "booth-c"] {
                #expect(late.objects(on: h.topics.beaconState(booth)).last?["count"] as? Int == 0)
            }
            await late.stop()

            let sessions = try h.rows("""
                SELECT user_key, beacon_key, venue_key, device, exit_reason, entered_at < exited_at
                FROM presence.sessions_v ORDER BY entered_at
                """)
            #expect(sessions == ["alice|booth-a|expo|\(Self.tag)|moved|t", "alice|booth-b|expo|\(Self.tag)|moved|t", "alice|booth-c|expo|\(Self.tag)|timeout|t"])
            #expect(try h.rows("SELECT count(*) FROM presence.current_v") == ["0"])
            // Acknowledgements are stored with the database writer's next transaction.
            try await eventually(5, "every event marked published") {
                (try? h.rows("SELECT count(*) FROM presence.events WHERE published_at IS NULL")) == ["0"]
            }

            // The recording replays to the very events the aggregator published, the very Home
            // Assistant messages, and the very feed its venue page shows, byte for byte.
            #expect(await recorder.stop() == 0)
            let replay = try h.ctl("replay", recording)
            #expect(replay.status == 0, "\(replay.stderr)")
            let replayed = replay.stdout.split(separator: "\n").map(String.init)
            #expect(replayed == bus.messages(on: eventTopic).map(\.text))
            let published = try h.ctl("replay", recording, "--print", "messages", "--ha-discovery", "--ha-prefix", assistant)
            let replayedAssistant = published.stdout.split(separator: "\n").compactMap { line -> String? in
                guard let message = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let topic = message["topic"] as? String, topic.hasPrefix(assistant + "/") else { return nil }
                return "\(topic) \(message["payload"] as? String ?? "")"
            }
            let liveAssistant = bus.messages.filter { $0.topic.hasPrefix(assistant + "/") }.map { "\($0.topic) \($0.text)" }
            #expect(liveAssistant.count > 6 && replayedAssistant == liveAssistant, "\(replayedAssistant) against \(liveAssistant)")
            let feed = try h.ctl("replay", recording, "--print", "feed")
            #expect(feed.stdout == liveFeed.body + "\n", "\(feed.stdout) against \(liveFeed.body)")
            try? FileManager.default.removeItem(atPath: recording)

            #expect(await aggregator.stop() == 0, "aggregator log: \(aggregator.stderr.suffix(2000))")
            let status = bus.objects(on: h.topics.aggregatorStatus).last
            #expect(status?["state"] as? String == "offline")
            await bus.stop()
            await publisher.stop()
        }
    }
}
