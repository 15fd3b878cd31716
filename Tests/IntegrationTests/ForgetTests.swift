import Foundation
import PresenceCore
import PresenceMQTT
import Testing

/// `presencectl user forget`: afterwards no table and no retained topic holds the user's key or
/// any of their identities, with an aggregator running (and still hearing the user's tag) and
/// without one. The aggregator publishes Home Assistant discovery too (under the test's prefix),
/// whose tracker of the user must go as well.
@Suite struct ForgetTests {
    static let alicesTag = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:1"
    static let bobsTag = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:2"

    static func register(_ h: PipelineHarness) async throws {
        try await h.ctlOKAsync("migrate")
        try await h.ctlOKAsync("venue", "add", "lab")
        try await h.ctlOKAsync("zone", "add", "lab-floor", "--venue", "lab")
        try await h.ctlOKAsync("beacon", "add", "desk-1", "--venue", "lab", "--zone", "lab-floor", "--hello", "Hello {name}")
        try await h.ctlOKAsync("node", "add", "scan-1", "--venue", "lab", "--beacon", "desk-1")
        for (user, tag) in [("alice", alicesTag), ("bob", bobsTag)] {
            try await h.ctlOKAsync("user", "add", user, "--name", user.capitalized)
            try await h.ctlOKAsync("device", "add", tag, "--user", user)
        }
    }

    /// Publishes a batch with both tags (or only bob's) from scan-1 every 300 ms until `until` says stop.
    static func hear(_ publisher: MQTTClient, _ h: PipelineHarness, seq: inout Int64, tags: [String], count: Int) async throws {
        for _ in 0 ..< count {
            seq += 1
            let ts = Int64(Date().timeIntervalSince1970 * 1000)
            try await publisher.publish(SightingBatch(node: "scan-1", seq: seq, sent: ts, sightings: tags.map { Sighting(ts: ts, id: $0, rssi: -55, tx: -59) }),
                                        topics: h.topics)
            try await Task.sleep(for: .milliseconds(300))
        }
    }

    /// Rows of any table of the schema whose text holds one of `needles`, as "table: row", in one
    /// query: a psql run per table and needle took long enough under load (17 s with both cores
    /// busy) for the users the test means to forget while present to time out first.
    static func traces(of needles: [String], in h: PipelineHarness) throws -> [String] {
        let tables = try h.rows("SELECT table_name FROM information_schema.tables WHERE table_schema = 'presence' AND table_type = 'BASE TABLE' ORDER BY 1")
        #expect(tables.contains("sessions") && tables.contains("events") && tables.contains("notifications"))
        let matches = needles.map { "strpos(t::text, '\($0)') > 0" }.joined(separator: " OR ")
        let query = tables.map { "SELECT '\($0): ' || t::text FROM presence.\($0) t WHERE \(matches)" }.joined(separator: " UNION ALL ")
        return try h.rows(query)
    }

    /// Every retained message under the harness's prefix, read by a fresh subscriber.
    static func retained(_ h: PipelineHarness) async throws -> [MQTTMessage] {
        let recorder = try await h.recorder()
        try await Task.sleep(for: .seconds(1))
        await recorder.stop()
        return recorder.messages.filter(\.retain)
    }

    static func mentions(_ message: MQTTMessage, _ needles: [String]) -> Bool {
        needles.contains { message.topic.contains($0) || message.text.contains($0) }
    }

    @Test(arguments: [true, false])
    func aForgottenUserLeavesNoTrace(aggregatorRunning: Bool) async throws {
        let h = try PipelineHarness("forget")
        try await Self.register(h)
        let bus = try await h.recorder()
        let assistant = "\(h.prefix)/ha"
        // At info, as venues run it: no log line may name a user or a device.
        var aggregator: ChildProcess? = try h.startAggregator(["--log-level", "info", "--ha-discovery", "--ha-prefix", assistant])
        try await bus.wait(15, for: "the aggregator's online status") { messages in
            messages.contains { $0.topic == h.topics.aggregatorStatus && $0.text.contains("\"online\"") }
        }
        let publisher = try await h.publisher()
        var seq: Int64 = 0
        try await Self.hear(publisher, h, seq: &seq, tags: [Self.alicesTag, Self.bobsTag], count: 8)
        try await bus.wait(15, for: "both enters and desk-1's state with both") { messages in
            messages.contains { $0.topic == h.topics.beaconState("desk-1") && $0.text.contains("alice") && $0.text.contains("bob") }
        }
        try await eventually(10, "alice's enter, hello and zone stay stored") {
            (try? h.rows("SELECT count(*) FROM presence.notifications WHERE user_key = 'alice'")) == ["1"]
                && (try? h.rows("SELECT count(*) FROM presence.events WHERE user_key = 'alice'")) == ["1"]
                && (try? h.rows("SELECT count(*) FROM presence.zone_sessions WHERE user_key = 'alice'")) == ["1"]
        }
        let needles = ["alice", Self.alicesTag, "Alice"]
        #expect(try !Self.traces(of: needles, in: h).isEmpty, "the test must start with traces to remove")
        try await bus.wait(10, for: "alice's Home Assistant tracker at desk-1") { messages in
            messages.contains { $0.topic == "\(assistant)/device_tracker/presence_alice/state" && $0.text == "desk-1" }
        }
        try await bus.wait(15, for: "a fleet health report listing alice's tag") { messages in
            messages.contains { $0.topic == h.topics.health && $0.text.contains(Self.alicesTag) }
        }
        if !aggregatorRunning {
            await aggregator?.stop()
            aggregator = nil
        }

        let before = bus.messages.count
        let forget = try await h.ctlAsync("user", "forget", "alice", "--ha-prefix", assistant)
        #expect(forget.status == 0, "\(forget.stderr)")
        #expect(forget.stdout.contains("1 beacon state"), "\(forget.stdout)")
        #expect(forget.stdout.contains("1 zone state"), "\(forget.stdout)")
        if !aggregatorRunning {
            #expect(forget.stdout.contains("and their devices from the fleet health"), "\(forget.stdout)")
        }
        // Alice's tag is still heard; bob stays.
        try await Self.hear(publisher, h, seq: &seq, tags: [Self.alicesTag, Self.bobsTag], count: 10)

        #expect(try Self.traces(of: needles, in: h) == [])
        // What the aggregator published since (the test's own sightings aside).
        let after = bus.messages.dropFirst(before).filter { !$0.topic.hasPrefix("\(h.prefix)/v1/sightings/") }
        let cleared = [h.topics.userState("alice")] + (try HomeAssistantTopics(prefix: assistant)).userTopics("alice")
        let published = after.filter { Self.mentions($0, needles) && !(cleared.contains($0.topic) && $0.payload.isEmpty) }
        #expect(published.isEmpty, "published about alice after the forget: \(published.map { "\($0.topic) \($0.text)" })")
        let retained = try await Self.retained(h)
        #expect(retained.filter { Self.mentions($0, needles) }.isEmpty, "retained: \(retained.map { "\($0.topic) \($0.text)" })")
        #expect(retained.contains { $0.topic == h.topics.beaconState("desk-1") && $0.text.contains("bob") }, "bob's presence was kept")
        #expect(retained.contains { $0.topic == h.topics.zoneState("lab-floor") && $0.text.contains("bob") }, "bob's zone was kept")
        #expect(try h.rows("SELECT user_key FROM presence.zone_sessions WHERE exited_at IS NULL") == ["bob"])
        #expect(try h.rows("SELECT user_key FROM presence.sessions WHERE exited_at IS NULL") == ["bob"])
        if let aggregator {
            #expect(aggregator.stderr.contains("forgot users removed by an erasure"))
            #expect(!Self.mentions(MQTTMessage(topic: "", payload: Array(aggregator.stderr.utf8)), needles + ["bob", Self.bobsTag]),
                    "the aggregator's info log names a user or a device")
            await aggregator.stop()
        }
        await publisher.stop()
        await bus.stop()

        let again = try await h.ctlAsync("user", "forget", "alice", "--ha-prefix", assistant)
        #expect(again.status == 0 && again.stdout.contains("0 devices"), "forgetting again clears the broker again: \(again.stderr)")
    }
}
