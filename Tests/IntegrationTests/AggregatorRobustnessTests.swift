import Foundation
import PresenceCore
import PresenceMQTT
import Testing

extension EndToEndTests {
    /// The aggregator under hostile input, restarts and registry changes.
    @Suite struct AggregatorRobustnessTests {
        static let tag = AggregatorWalkTests.tag

        /// Publishes one sighting per second from `node` for `user`'s tag until `stop` returns true.
        static func heartbeat(_ publisher: MQTTClient, _ h: PipelineHarness, node: String, id: String = tag, rssi: Int = -55,
                              every interval: Duration = .milliseconds(500), while keepGoing: @escaping @Sendable () -> Bool) -> Task<Int64, any Error> {
            Task {
                var seq: Int64 = 0
                var last: Int64 = 0
                while keepGoing() && !Task.isCancelled {
                    seq += 1
                    last = nowMilliseconds()
                    try await publisher.publish(SightingBatch(node: node, seq: seq, sent: last, sightings: [Sighting(ts: last, id: id, rssi: rssi, tx: -59)]),
                                                topics: h.topics)
                    try await Task.sleep(for: interval)
                }
                return last
            }
        }

        @Test func hostilePayloadsAreDroppedAndCountedWhileValidTrafficFlows() async throws {
            let h = try PipelineHarness("hostile")
            try AggregatorWalkTests.register(h)
            let bus = try await h.recorder()
            let aggregator = try h.startAggregator()
            try await bus.wait(15, for: "online") { $0.contains { $0.topic == h.topics.aggregatorStatus } }
            let publisher = try await h.publisher()
            let flag = Flag()
            let valid = Self.heartbeat(publisher, h, node: "node-a", while: { !flag.isSet })

            let topic = h.topics.sightings(node: "node-b")
            let many = SightingBatch(node: "node-b", seq: 1, sent: nowMilliseconds(),
                                     sightings: Array(repeating: Sighting(ts: nowMilliseconds(), id: Self.tag, rssi: -50), count: 20_000))
            let tooMany = SightingBatch(node: "node-b", seq: 2, sent: nowMilliseconds(),
                                        sightings: Array(repeating: Sighting(ts: nowMilliseconds(), id: "mac:c4:7c:8d:6a:2b:01", rssi: -50), count: 12_000))
            #expect(many.encoded().count > SightingLimits.maximumBytes && tooMany.encoded().count < SightingLimits.maximumBytes)
            let hostile: [[UInt8]] = [
                Array("not json at all".utf8),
                Array(#"{"v":1,"node":"node-b","seq":"one","sent":1,"sightings":[]}"#.utf8),
                Array(#"{"v":1,"node":"node-a","seq":1,"sent":1763774734123,"sightings":[]}"#.utf8),
                many.encoded(),
                tooMany.encoded(),
                [UInt8](repeating: 0, count: 2 << 20),
                Array(#"{"v":1,"node":"node-b","seq":1,"sent":1763774734123,"sightings":[{"ts":"x","id":5,"rssi":-300}]}"#.utf8),
                Array(String(repeating: "[", count: 100_000).utf8),
            ]
            for _ in 0 ..< 3 {
                for payload in hostile {
                    try await publisher.publish(MQTTMessage(topic: topic, payload: payload, qos: 1))
                }
            }
            try await bus.wait(20, for: "alice to enter booth-a") { messages in
                messages.contains { $0.topic == h.topics.event(beacon: "booth-a", user: "alice") && $0.text.contains("\"enter\"") }
            }
            try await bus.wait(10, for: "statistics that count every drop") { messages in
                guard let stats = messages.last(where: { $0.topic == h.topics.aggregatorStats }),
                      let object = try? JSONSerialization.jsonObject(with: Data(stats.payload)) as? [String: Any],
                      let rejected = object["rejected_batches"] as? [String: Int] else { return false }
                return rejected["not_json"] == 6 && rejected["bad_field"] == 3 && rejected["wrong_node"] == 3
                    && rejected["too_many_sightings"] == 3 && rejected["too_large"] == 6 && (object["dropped_sightings"] as? Int) == 3
            }
            flag.set()
            _ = try await valid.value
            #expect(aggregator.poll() == nil, "the aggregator died: \(aggregator.stderr.suffix(2000))")
            #expect(aggregator.stderr.contains("ignored a message"))
            let warnings = aggregator.stderr.split(separator: "\n").filter { $0.contains("ignored a message") }.count
            #expect(warnings <= 6, "rate limiting let \(warnings) warnings through")
            #expect(await aggregator.stop() == 0)
            await bus.stop()
            await publisher.stop()
        }

        /// Registers the walk's venue and alice, and bob with his own tag (returned).
        static func registerWithBob(_ h: PipelineHarness) throws -> String {
            try AggregatorWalkTests.register(h)
            try h.ctlOK("user", "add", "bob")
            let bobTag = "ibeacon:\(AggregatorWalkTests.uuid):7:2"
            try h.ctlOK("device", "add", bobTag, "--user", "bob")
            return bobTag
        }

        /// The resident memory of process `pid`, in KiB (VmRSS).
        static func residentKiB(_ pid: pid_t) -> Int {
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }

        /// Publishes every message with QoS 1, eight at a time.
        static func flood(_ publisher: MQTTClient, _ messages: [MQTTMessage]) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0 ..< 8 {
                    group.addTask {
                        for index in stride(from: lane, to: messages.count, by: 8) { try await publisher.publish(messages[index]) }
                    }
                }
                try await group.waitForAll()
            }
        }

        @Test func extremeNumbersAndInventedNodesNeitherStopNorGrowTheAggregator() async throws {
            let h = try PipelineHarness("extremes")
            let bobTag = try Self.registerWithBob(h)
            let bus = try await h.recorder()
            let aggregator = try h.startAggregator(["--log-level", "info"])
            try await bus.wait(15, for: "online") { $0.contains { $0.topic == h.topics.aggregatorStatus } }
            let publisher = try await h.publisher()
            let done = Flag()
            let alice = Self.heartbeat(publisher, h, node: "node-a", while: { !done.isSet })
            try await bus.wait(15, for: "alice to enter") { messages in
                messages.contains { $0.topic == h.topics.event(beacon: "booth-a", user: "alice") && $0.text.contains("\"enter\"") }
            }

            // Numbers at the ends of Int64 (and 0) in sent and ts, on a registered node's topic.
            let extremes: [Int64] = [.min, .max, 0]
            var hostile: [MQTTMessage] = []
            for sent in extremes + [nowMilliseconds()] {
                for ts in extremes {
                    let text = #"{"v":1,"node":"node-b","seq":1,"sent":\#(sent),"sightings":[{"ts":\#(ts),"id":"\#(bobTag)","rssi":-50}]}"#
                    hostile.append(MQTTMessage(topic: h.topics.sightings(node: "node-b"), payload: Array(text.utf8), qos: 1))
                }
            }
            // Numbers too long for 64 bits, and identities with escapes, UTF-8 and a raw control
            // character, which the reader scans a word at a time.
            let sent = nowMilliseconds()
            for sighting in [#"{"ts":9999999999999999999999999,"id":"\#(bobTag)","rssi":-50}"#, #"{"ts":\#(sent),"id":"\#(bobTag)","rssi":-100000000000000000000}"#,
                             #"{"ts":\#(sent),"id":"ibeacon:\"quoted\\ \u00e9 é","rssi":-50}"#, "{\"ts\":\(sent),\"id\":\"ibeacon:\u{01}ctl\",\"rssi\":-50}"] {
                let text = #"{"v":1,"node":"node-b","seq":1,"sent":\#(sent),"sightings":[\#(sighting)]}"#
                hostile.append(MQTTMessage(topic: h.topics.sightings(node: "node-b"), payload: Array(text.utf8), qos: 1))
            }
            try await Self.flood(publisher, hostile)

            // Thousands of invented nodes, with long names, on every node topic.
            func inventedNodes(_ round: Int, count: Int) -> [MQTTMessage] {
                (0 ..< count).flatMap { i -> [MQTTMessage] in
                    let name = i % 2 == 0 ? "ghost-\(round)-\(i)-" + String(repeating: "x", count: 40) : String(repeating: "Q", count: 300) + "-\(round)-\(i)"
                    let batch = SightingBatch(node: name, seq: 1, sent: nowMilliseconds(), sightings: [Sighting(ts: nowMilliseconds(), id: bobTag, rssi: -40)])
                    return [MQTTMessage(topic: h.topics.sightings(node: name), payload: batch.encoded(), qos: 1),
                            MQTTMessage(topic: h.topics.nodeStatus(node: name), payload: ServiceStatus(state: .offline).encoded(), qos: 1),
                            MQTTMessage(topic: h.topics.nodeStats(node: name), payload: Array(#"{"v":1}"#.utf8), qos: 1)]
                }
            }
            let perRound = 10_000
            try await Self.flood(publisher, inventedNodes(0, count: perRound))
            try await Task.sleep(for: .seconds(2))
            let before = Self.residentKiB(aggregator.pid)
            for round in 1 ... 3 { try await Self.flood(publisher, inventedNodes(round, count: perRound)) }
            try await bus.wait(20, for: "statistics that count every stranger") { messages in
                guard let stats = messages.last(where: { $0.topic == h.topics.aggregatorStats }),
                      let object = try? JSONSerialization.jsonObject(with: Data(stats.payload)) as? [String: Any],
                      let strangers = object["strangers"] as? [String: Int] else { return false }
                return (strangers["unregistered_node"] ?? 0) + (strangers["bad_node_name"] ?? 0) == 4 * perRound * 3
            }
            let after = Self.residentKiB(aggregator.pid)
            #expect(after - before < 8 * 1024, "resident memory grew from \(before) KiB to \(after) KiB under invented nodes")

            // Valid traffic is decided as before: bob arrives at booth-b.
            let bob = Self.heartbeat(publisher, h, node: "node-b", id: bobTag, while: { !done.isSet })
            try await bus.wait(15, for: "bob to enter booth-b") { messages in
                messages.contains { $0.topic == h.topics.event(beacon: "booth-b", user: "bob") && $0.text.contains("\"enter\"") }
            }
            done.set()
            _ = try await alice.value
            _ = try await bob.value
            #expect(aggregator.poll() == nil, "the aggregator died: \(aggregator.stderr.suffix(2000))")
            let warnings = aggregator.stderr.split(separator: "\n").filter { $0.contains("ignored a message") }.count
            #expect(warnings <= 12, "rate limiting let \(warnings) warnings through")
            let events = bus.objects(on: "\(h.prefix)/v1/events/").map { "\($0["event"] ?? "") \($0["user"] ?? "")" }
            #expect(events == ["enter alice", "enter bob"])
            #expect(await aggregator.stop() == 0)
            await bus.stop()
            await publisher.stop()
        }

        @Test func afterKillNineTheAggregatorResumesSessions() async throws {
            let h = try PipelineHarness("restart")
            let bobTag = try Self.registerWithBob(h)
            let bus = try await h.recorder()
            var aggregator = try h.startAggregator()
            let publisher = try await h.publisher()
            let aliceStays = Flag()
            let bobStays = Flag()
            let alice = Self.heartbeat(publisher, h, node: "node-a", while: { !aliceStays.isSet })
            let bob = Self.heartbeat(publisher, h, node: "node-b", id: bobTag, while: { !bobStays.isSet })
            try await bus.wait(20, for: "both to enter") { messages in
                messages.filter { $0.topic.hasPrefix("\(h.prefix)/v1/events/") && $0.text.contains("\"enter\"") }.count == 2
            }
            try await Task.sleep(for: .seconds(3))
            aggregator.send(SIGKILL)
            _ = await aggregator.wait(timeout: .seconds(5))
            // Bob leaves while the aggregator is down; the broker keeps his last sightings for it.
            try await Task.sleep(for: .seconds(2))
            bobStays.set()
            let bobLast = try await bob.value
            try await Task.sleep(for: .seconds(20))
            aggregator = try h.startAggregator()
            try await bus.wait(25, for: "bob's exit") { messages in
                messages.contains { $0.topic == h.topics.event(beacon: "booth-b", user: "bob") && $0.text.contains("\"exit\"") }
            }
            try await Task.sleep(for: .seconds(3))
            aliceStays.set()
            _ = try await alice.value
            let events = bus.objects(on: "\(h.prefix)/v1/events/")
            let summary = events.map { "\($0["event"] ?? "") \($0["user"] ?? "") \($0["reason"] ?? "-")" }
            #expect(summary.filter { $0.hasPrefix("enter alice") }.count == 1, "\(summary)")
            #expect(summary.filter { $0.hasPrefix("enter bob") }.count == 1, "\(summary)")
            let bobExit = events.first { $0["user"] as? String == "bob" && $0["event"] as? String == "exit" }
            #expect(bobExit?["reason"] as? String == "timeout")
            let exitAt = Int64((bobExit?["at"] as? Int) ?? 0)
            #expect(exitAt == bobLast, "bob's exit at \(exitAt), last seen \(bobLast)")
            #expect(try h.rows("SELECT user_key FROM presence.current_v") == ["alice"])
            #expect(await aggregator.stop() == 0)
            await bus.stop()
            await publisher.stop()
        }

        /// Bob is heard for a few seconds and stops being heard while his session is open; the
        /// aggregator is killed before his exit is due and started again after he left, with nothing
        /// of his in the broker's backlog: his exit is dated by his last sighting, within a tick and
        /// the lateness, whichever way the engine decides.
        @Test(arguments: ["hmm", "dwell"])
        func afterKillNineAnExitIsDatedByTheLastSightingBeforeIt(decide: String) async throws {
            let h = try PipelineHarness("restart-\(decide)")
            let bobTag = try Self.registerWithBob(h)
            let bus = try await h.recorder()
            var aggregator = try h.startAggregator(["--decide", decide])
            let publisher = try await h.publisher()
            let bobStays = Flag()
            let bob = Self.heartbeat(publisher, h, node: "node-b", id: bobTag, while: { !bobStays.isSet })
            try await bus.wait(20, for: "bob's enter") { messages in
                messages.contains { $0.topic == h.topics.event(beacon: "booth-b", user: "bob") && $0.text.contains("\"enter\"") }
            }
            try await Task.sleep(for: .seconds(4))
            bobStays.set()
            let bobLast = try await bob.value
            // Killed while bob's session is open, a few seconds after his last sighting and well
            // before his absence timeout (15 s) is due.
            try await Task.sleep(for: .seconds(5))
            aggregator.send(SIGKILL)
            _ = await aggregator.wait(timeout: .seconds(5))
            try await Task.sleep(for: .seconds(15))
            aggregator = try h.startAggregator(["--decide", decide])
            try await bus.wait(30, for: "bob's exit") { messages in
                messages.contains { $0.topic == h.topics.event(beacon: "booth-b", user: "bob") && $0.text.contains("\"exit\"") }
            }
            let events = bus.objects(on: "\(h.prefix)/v1/events/")
            let bobExit = events.first { $0["user"] as? String == "bob" && $0["event"] as? String == "exit" }
            #expect(bobExit?["reason"] as? String == "timeout")
            let exitAt = Int64((bobExit?["at"] as? Int) ?? 0)
            #expect(abs(exitAt - bobLast) <= 1_100, "bob's exit at \(exitAt), his last sighting at \(bobLast): \(exitAt - bobLast) ms apart")
            #expect(await aggregator.stop() == 0)
            await bus.stop()
            await publisher.stop()
        }

        @Test func registryChangesReachARunningAggregatorWithinTwoSeconds() async throws {
            let h = try PipelineHarness("registry")
            try AggregatorWalkTests.register(h)
            let carol = "ibeacon:\(AggregatorWalkTests.uuid):7:3"
            let bus = try await h.recorder()
            let aggregator = try h.startAggregator()
            try await bus.wait(15, for: "online") { $0.contains { $0.topic == h.topics.aggregatorStatus } }
            let publisher = try await h.publisher()
            let done = Flag()
            let heartbeat = Self.heartbeat(publisher, h, node: "node-c", id: carol, while: { !done.isSet })
            try await Task.sleep(for: .seconds(3))
            #expect(bus.objects(on: "\(h.prefix)/v1/events/").isEmpty, "an unregistered tag made events")

            try h.ctlOK("user", "add", "carol")
            try h.ctlOK("device", "add", carol, "--user", "carol")
            let registered = ContinuousClock.now
            try await bus.wait(10, for: "carol to enter") { messages in
                messages.contains { $0.topic == h.topics.event(beacon: "booth-c", user: "carol") && $0.text.contains("\"enter\"") }
            }
            // Matching starts within 2 s; the enter then needs its dwell and the watermark.
            #expect(ContinuousClock.now - registered < .seconds(2 + 1 + 1 + 1))

            try h.ctlOK("user", "incognito", "carol", "--for", "1h")
            try await bus.wait(4, for: "carol's incognito exit") { messages in
                messages.contains { $0.topic == h.topics.event(beacon: "booth-c", user: "carol") && $0.text.contains("\"incognito\"") }
            }
            try await Task.sleep(for: .seconds(3))
            let carolEvents = bus.objects(on: h.topics.event(beacon: "booth-c", user: "carol"))
            #expect(carolEvents.map { $0["event"] as? String } == ["enter", "exit"])
            #expect(bus.messages(on: h.topics.userState("carol")).last?.payload.isEmpty == true, "incognito leaves no retained state")
            #expect(try h.rows("SELECT count(*) FROM presence.sessions WHERE exited_at IS NULL") == ["0"])

            try h.ctlOK("user", "incognito", "carol", "--off")
            try await bus.wait(6, for: "carol to enter again") { messages in
                messages.filter { $0.topic == h.topics.event(beacon: "booth-c", user: "carol") && $0.text.contains("\"enter\"") }.count == 2
            }
            try h.ctlOK("beacon", "rm", "booth-c")
            try await bus.wait(4, for: "the removed exit") { messages in
                messages.contains { $0.topic == h.topics.event(beacon: "booth-c", user: "carol") && $0.text.contains("\"removed\"") }
            }
            try await bus.wait(4, for: "booth-c's retained state to be deleted") { messages in
                messages.last { $0.topic == h.topics.beaconState("booth-c") }?.payload.isEmpty == true
            }
            done.set()
            _ = try await heartbeat.value
            #expect(await aggregator.stop() == 0)
            await bus.stop()
            await publisher.stop()
        }
    }
}
