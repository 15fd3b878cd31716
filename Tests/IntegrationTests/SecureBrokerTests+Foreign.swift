import Foundation
import PresenceCore
import PresenceMQTT
import Testing

/// ESPresense rooms on the deployed broker (TLS, passwords, the ACL): read over TLS through the
/// aggregator's swift-nio connection; and a broker that refuses the aggregator's subscription to them.
extension SecureBrokerTests {
    /// Two rooms, scan-1 at desk-1 and scan-2 at desk-2, and alice's iBeacon, on the deployed broker.
    static func rooms(_ label: String) async throws -> (PipelineHarness, ConfiguredBroker) {
        let plain = try PipelineHarness(label)
        try await plain.ctlOKAsync("migrate")
        try await plain.ctlOKAsync("venue", "add", "lab")
        for (index, desk) in ["desk-1", "desk-2"].enumerated() {
            try await plain.ctlOKAsync("beacon", "add", desk, "--venue", "lab", "--x", "\(index * 10)", "--y", "0")
            try await plain.ctlOKAsync("node", "add", "scan-\(index + 1)", "--venue", "lab", "--beacon", desk)
        }
        try await plain.ctlOKAsync("user", "add", "alice")
        try await plain.ctlOKAsync("device", "add", tag, "--user", "alice")
        let broker = try await ConfiguredBroker.deployed(prefix: plain.prefix, database: plain.databaseURL)
        return (try PipelineHarness(label, database: plain.databaseURL, broker: broker.url, prefix: plain.prefix), broker)
    }

    /// The aggregator over TLS, reading ESPresense's topics, with its HTTP face on `httpPort`.
    static func aggregator(_ h: PipelineHarness, _ broker: ConfiguredBroker, httpPort: Int) throws -> ChildProcess {
        try ChildProcess.spawn(try PackagePaths.executable("presence-aggregator"), [
            "--broker", "mqtts://presence-aggregator@localhost:\(broker.port)", "--ca-file", broker.caFile, "--topic-prefix", h.prefix,
            "--state-dir", h.stateDirectory, "--log-level", "debug", "--espresense", "espresense", "--http", "127.0.0.1:\(httpPort)",
        ], environment: [
            "PRESENCE_BROKER_PASSWORD_FILE": broker.passwordFile(of: "presence-aggregator"), "PRESENCE_DATABASE_URL": h.databaseURL,
            "PRESENCE_BROKER_URL": "",
        ])
    }

    /// What room `room` reports of alice at `rssi`, as ESPresense does.
    static func report(rssi: Int) -> [UInt8] {
        Array(#"{"mac":"c47c8d6a2b01","id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-7-1","rssi@1m":-59,"rssi":\#(rssi),"distance":nan}"#.utf8)
    }

    @Test func espresenseRoomsOverTLSDriveAnEnterAndAMove() async throws {
        let (h, broker) = try await Self.rooms("tls-rooms")
        let reader = try await Self.recorder(broker, as: "presence-reader", prefix: h.prefix)
        let httpPort = try freePort()
        let aggregator = try Self.aggregator(h, broker, httpPort: httpPort)
        try await waitForHTTP("http://127.0.0.1:\(httpPort)/readyz", within: 30)
        let rooms = [try await Self.client(broker, as: "scan-1"), try await Self.client(broker, as: "scan-2")]
        var random = RandomSource(seed: 34)
        let t0 = ContinuousClock.now
        while ContinuousClock.now - t0 < .seconds(20) {
            let near = ContinuousClock.now - t0 < .seconds(10) ? 0 : 1
            for (index, room) in rooms.enumerated() {
                let rssi = (index == near ? -55 : -80) + Int(random.next() % 5) - 2
                try room.publishWithoutAcknowledgement(MQTTMessage(topic: "espresense/devices/x/scan-\(index + 1)", payload: Self.report(rssi: rssi), qos: 0))
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        try await reader.wait(20, for: "alice's move to desk-2") { messages in
            messages.contains { $0.topic == h.topics.event(beacon: "desk-2", user: "alice") && $0.text.contains(#""event":"enter""#) }
        }
        let events = reader.objects(on: "\(h.prefix)/v1/events/").map { "\($0["event"] ?? "") \($0["beacon"] ?? "") \($0["reason"] ?? "-")" }
        #expect(events == ["enter desk-1 -", "exit desk-1 moved", "enter desk-2 -"])
        #expect(aggregator.stderr.contains("MQTT inbound connection subscribed"), "read through the swift-nio connection")
        for room in rooms { await room.stop() }
        await aggregator.stop()
        await reader.stop()
        await broker.stop()
    }

    @Test func aBrokerThatRefusesTheForeignFilterFailsReadinessNamingItAndGrantingItRecovers() async throws {
        // mosquitto refuses a SUBSCRIBE through its dynamic security plugin (an acl_file never does).
        let filter = "espresense/devices/+/+"
        let broker = try await ConfiguredBroker.refusingSubscriptions(of: "presence-aggregator", password: "secret", refused: [filter])
        let plain = try PipelineHarness("acl")
        try await plain.ctlOKAsync("migrate")
        try await plain.ctlOKAsync("venue", "add", "lab")
        try await plain.ctlOKAsync("beacon", "add", "desk-1", "--venue", "lab")
        try await plain.ctlOKAsync("node", "add", "scan-1", "--venue", "lab", "--beacon", "desk-1")
        try await plain.ctlOKAsync("user", "add", "alice")
        try await plain.ctlOKAsync("device", "add", Self.tag, "--user", "alice")
        let h = try PipelineHarness("acl", database: plain.databaseURL, broker: "mqtt://127.0.0.1:\(broker.port)", prefix: plain.prefix)
        let httpPort = try freePort()
        let aggregator = try ChildProcess.spawn(try PackagePaths.executable("presence-aggregator"), [
            "--broker", "mqtt://presence-aggregator:secret@127.0.0.1:\(broker.port)", "--topic-prefix", h.prefix, "--state-dir", h.stateDirectory,
            "--log-level", "debug", "--espresense", "espresense", "--http", "127.0.0.1:\(httpPort)",
        ], environment: ["PRESENCE_DATABASE_URL": h.databaseURL, "PRESENCE_BROKER_URL": ""])
        let readyz = "http://127.0.0.1:\(httpPort)/readyz"
        let problem = "foreign nodes' connection: the broker refused the subscription to \(filter) (SUBACK return code 0x80: failure)"
        var answer: HTTPAnswer?
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            answer = try? await httpGet(readyz)
            if answer?.status == 503, answer?.object["problems"] as? [String: String] == ["broker": problem] { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(answer?.status == 503 && answer?.object["problems"] as? [String: String] == ["broker": problem], "\(answer?.body ?? "no answer")")
        #expect(answer?.object["checks"] as? [String: Bool] == ["broker": false, "database": true, "registry": true])
        // Asked again under the retry policy (1 s, 2 s, 4 s...), refused again, said once.
        try await Task.sleep(for: .seconds(4))
        #expect(try await httpGet(readyz).status == 503)
        let lines = aggregator.stderr.split(separator: "\n").filter { $0.contains("refused the subscription to \(filter)") }
        #expect(lines.count == 1, "one log line, however often it is asked again: \(lines)")

        // The operator puts the broker's ACL right: the aggregator takes it up, unrestarted.
        try await broker.grant(filter, to: "presence-aggregator")
        let granted = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < granted, (try? await httpGet(readyz))?.status != 200 {
            try await Task.sleep(for: .milliseconds(200))
        }
        let recovered = try await httpGet(readyz)
        #expect(recovered.status == 200, "\(recovered.body)\n\(aggregator.stderr.suffix(3000))")
        #expect(aggregator.stderr.contains("the broker granted the subscription to \(filter)"))
        let bus = try await h.recorder()
        let room = try await h.publisher()
        try await eventually(20, "alice's enter from the room's reports") {
            try? room.publishWithoutAcknowledgement(MQTTMessage(topic: "espresense/devices/x/scan-1", payload: Self.report(rssi: -50), qos: 0))
            return bus.messages.contains { $0.topic == h.topics.event(beacon: "desk-1", user: "alice") && $0.text.contains(#""event":"enter""#) }
        }
        await room.stop()
        await aggregator.stop()
        await bus.stop()
        await broker.stop()
    }
}
