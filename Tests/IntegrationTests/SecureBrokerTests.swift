import Foundation
import PresenceCore
import PresenceMQTT
import Testing

/// The broker as a venue deploys it (`scripts/secure-broker.sh` and `deploy/mosquitto/`): TLS
/// with the CA it made, a password per node from the registry, and the ACL. Each attack is tried
/// against the real broker, next to a control that does what is allowed, so that a refusal cannot
/// come from something else being broken.
@Suite(.serialized) struct SecureBrokerTests {
    static let tag = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:1"
    static let fixture = PackagePaths.root.appendingPathComponent("Tests/Fixtures/scan.btsnoop").path

    /// A registry with nodes scan-1 (at desk-1) and scan-2, alice carrying the fixture's iBeacon,
    /// and the deployed broker made from it.
    static func venue(_ label: String) async throws -> (PipelineHarness, ConfiguredBroker) {
        let plain = try PipelineHarness(label)
        try await plain.ctlOKAsync("migrate")
        try await plain.ctlOKAsync("venue", "add", "lab")
        try await plain.ctlOKAsync("zone", "add", "lab-floor", "--venue", "lab")
        try await plain.ctlOKAsync("beacon", "add", "desk-1", "--venue", "lab", "--zone", "lab-floor")
        try await plain.ctlOKAsync("node", "add", "scan-1", "--venue", "lab", "--beacon", "desk-1")
        try await plain.ctlOKAsync("node", "add", "scan-2", "--venue", "lab")
        try await plain.ctlOKAsync("user", "add", "alice")
        try await plain.ctlOKAsync("device", "add", tag, "--user", "alice")
        let broker = try await ConfiguredBroker.deployed(prefix: plain.prefix, database: plain.databaseURL)
        let h = try PipelineHarness(label, database: plain.databaseURL, broker: broker.url, prefix: plain.prefix)
        return (h, broker)
    }

    /// The URL of `user` (nil: anonymous) with the password secure-broker.sh made for it.
    static func url(_ broker: ConfiguredBroker, as user: String?) throws -> String {
        guard let user else { return "mqtts://127.0.0.1:\(broker.port)" }
        let password = try String(contentsOfFile: broker.passwordFile(of: user), encoding: .utf8)
        return "mqtts://\(user):\(password)@127.0.0.1:\(broker.port)"
    }

    /// A started client logged in as `user`, checking the broker against the test CA.
    static func client(_ broker: ConfiguredBroker, as user: String) async throws -> MQTTClient {
        let client = try makeMQTTClient(try url(broker, as: user), user) { $0.caFile = broker.caFile }
        try client.start()
        try await within(10, "\(user) to connect") { try await client.waitUntilConnected() }
        return client
    }

    /// A started recorder of everything `user` may read under the prefix.
    static func recorder(_ broker: ConfiguredBroker, as user: String, prefix: String) async throws -> BusRecorder {
        let recorder = try BusRecorder(url: try url(broker, as: user), filter: "\(prefix)/v1/#") { $0.caFile = broker.caFile }
        try await recorder.start()
        return recorder
    }

    static func batch(_ node: String, rssi: Int) -> SightingBatch {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return SightingBatch(node: node, seq: 1, sent: now, sightings: [Sighting(ts: now, id: tag, rssi: rssi, tx: -59)])
    }

    @Test func strangersCannotConnectAndNodesAndReadersOnlyTouchTheirOwnTopics() async throws {
        let (h, broker) = try await Self.venue("acl")
        let aggregatorSide = try await Self.recorder(broker, as: "presence-aggregator", prefix: h.prefix)
        let readerSide = try await Self.recorder(broker, as: "presence-reader", prefix: h.prefix)
        // Home Assistant, logged in as a reader, reads the discovery prefix.
        let assistantSide = try BusRecorder(url: try Self.url(broker, as: "presence-reader"), filter: "homeassistant/#") { $0.caFile = broker.caFile }
        try await assistantSide.start()
        let tracker = try HomeAssistantTopics().trackerConfig("alice")

        // Anonymous: refused at the door (MQTT 5 "not authorized").
        let anonymous = try makeMQTTClient(try Self.url(broker, as: nil), "anonymous") { $0.caFile = broker.caFile }
        try anonymous.start()
        await #expect(throws: MQTTError.self) { try await within(10, "the refusal") { try await anonymous.waitUntilConnected() } }
        await anonymous.stop()

        let node2 = try await Self.client(broker, as: "scan-2")
        let aggregator = try await Self.client(broker, as: "presence-aggregator")
        let reader = try await Self.client(broker, as: "presence-reader")
        // scan-2 speaks for scan-1: its sightings and a retained "offline" status. A reader
        // publishes an event, and sightings of a node named after itself. Each is refused with
        // MQTT 5's "not authorized" (135).
        let attempts: [(String, MQTTClient, MQTTMessage)] = [
            ("scan-2 as scan-1", node2, MQTTMessage(topic: h.topics.sightings(node: "scan-1"), payload: Self.batch("scan-1", rssi: -40).encoded())),
            ("scan-2 as scan-1, in a shard", node2,
             MQTTMessage(topic: h.topics.sightings(node: "scan-1", shard: 3), payload: Self.batch("scan-1", rssi: -40).encoded())),
            ("scan-2's venue configuration", node2, MQTTMessage(topic: h.topics.config, payload: Array(#"{"v":1,"shards":2}"#.utf8), retain: true)),
            ("scan-2's offline status for scan-1", node2,
             MQTTMessage(topic: h.topics.nodeStatus(node: "scan-1"), payload: Array(#"{"v":1,"state":"offline"}"#.utf8), retain: true)),
            ("a reader's event", reader, MQTTMessage(topic: h.topics.event(beacon: "desk-1", user: "mallory"), payload: Array("{}".utf8))),
            ("a reader's sightings", reader,
             MQTTMessage(topic: h.topics.sightings(node: "presence-reader"), payload: Self.batch("presence-reader", rssi: -40).encoded())),
            ("scan-2's Home Assistant tracker", node2, MQTTMessage(topic: tracker, payload: Array("{}".utf8), retain: true)),
            ("a reader's Home Assistant tracker", reader, MQTTMessage(topic: tracker, payload: Array("{}".utf8), retain: true)),
        ]
        for (what, client, message) in attempts {
            await #expect("\(what)", performing: { try await client.publish(message) }, throws: { ($0 as? MQTTError)?.code == 135 })
        }
        // The controls: scan-2 as itself, and the aggregator's event, arrive.
        try await node2.publish(Self.batch("scan-2", rssi: -41), topics: h.topics)
        try await aggregator.publish(MQTTMessage(topic: h.topics.event(beacon: "desk-1", user: "alice"), payload: Array("{}".utf8), qos: 1))
        try await aggregator.publish(MQTTMessage(topic: tracker, payload: Array(#"{"name":null}"#.utf8), qos: 1))
        try await assistantSide.wait(10, for: "the aggregator's Home Assistant config") { $0.contains { $0.topic == tracker } }
        #expect(assistantSide.messages.map(\.text) == [#"{"name":null}"#], "only the aggregator's config reached Home Assistant")

        try await aggregatorSide.wait(10, for: "scan-2's own batch") { $0.contains { $0.topic == h.topics.sightings(node: "scan-2") } }
        try await readerSide.wait(10, for: "the aggregator's event") { $0.contains { $0.topic == h.topics.event(beacon: "desk-1", user: "alice") } }
        try await Task.sleep(for: .seconds(1))
        // (Aggregators read the events too: several that share a venue show each other's on their pages.)
        #expect(aggregatorSide.messages.map(\.topic).sorted() == [h.topics.event(beacon: "desk-1", user: "alice"), h.topics.sightings(node: "scan-2")].sorted(),
                "the aggregator reads only scan-2's own batch and the aggregator's event")
        #expect(readerSide.messages.map(\.topic) == [h.topics.event(beacon: "desk-1", user: "alice")], "readers read only the aggregator's event")
        for client in [node2, aggregator, reader] { await client.stop() }
        await aggregatorSide.stop()
        await readerSide.stop()
        await assistantSide.stop()
        await broker.stop()
    }

    @Test func theAggregatorAScannerAndAForeignRoomWorkOverTLSWithPasswordsFromFilesAndASpoofMakesNoEvent() async throws {
        let (h, broker) = try await Self.venue("tls")
        let databaseFile = FileManager.default.temporaryDirectory.appendingPathComponent("presence-db-\(UUID().uuidString)").path
        try (h.databaseURL + "\n").write(toFile: databaseFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: databaseFile) }
        let reader = try await Self.recorder(broker, as: "presence-reader", prefix: h.prefix)

        let aggregator = try ChildProcess.spawn(try PackagePaths.executable("presence-aggregator"), [
            "--broker", "mqtts://presence-aggregator@localhost:\(broker.port)", "--ca-file", broker.caFile, "--topic-prefix", h.prefix,
            "--enter-sightings", "1", "--enter-dwell", "0s", "--state-dir", h.stateDirectory, "--log-level", "debug", "--espresense", "espresense",
        ], environment: [
            "PRESENCE_BROKER_PASSWORD_FILE": broker.passwordFile(of: "presence-aggregator"), "PRESENCE_DATABASE_URL_FILE": databaseFile,
            "PRESENCE_DATABASE_URL": "", "PRESENCE_BROKER_URL": "",
        ])
        try await reader.wait(20, for: "the aggregator to say it is online") { messages in
            messages.contains { $0.topic == h.topics.aggregatorStatus && $0.text.contains("online") }
        }

        // scan-2 publishes as scan-1, which stands at desk-1: no event results.
        let node2 = try await Self.client(broker, as: "scan-2")
        try? await node2.publish(Self.batch("scan-1", rssi: -45), topics: h.topics)
        try await Task.sleep(for: .seconds(3))
        #expect(reader.messages(on: "\(h.prefix)/v1/events/").isEmpty)
        #expect(try h.rows("SELECT count(*) FROM presence.events") == ["0"])

        // The same through ESPresense's topics (read over TLS by the aggregator's own session): scan-2
        // cannot report as the room scan-1; scan-1, an ESPresense room here, can, and alice enters.
        let report = Array(#"{"mac":"c47c8d6a2b01","id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-7-1","rssi@1m":-59,"rssi":-45,"distance":nan}"#.utf8)
        await #expect("scan-2 as the room scan-1", performing: {
            try await node2.publish(MQTTMessage(topic: "espresense/devices/x/scan-1", payload: report, qos: 1))
        }, throws: { ($0 as? MQTTError)?.code == 135 })
        await node2.stop()
        let room = try await Self.client(broker, as: "scan-1")
        try await room.publish(MQTTMessage(topic: "espresense/rooms/scan-1/status", payload: Array("online".utf8), qos: 1))
        try await room.publish(MQTTMessage(topic: "espresense/devices/x/scan-1", payload: report, qos: 1))
        try await reader.wait(15, for: "alice's enter at desk-1, from the room's report") { messages in
            messages.contains { $0.topic == h.topics.event(beacon: "desk-1", user: "alice") && $0.text.contains(#""event":"enter""#) }
        }
        await room.stop()

        // The real scanner, as scan-1, over TLS with its password from a file: alice enters.
        let scanner = try ChildProcess.spawn(try PackagePaths.executable("presence-scanner"), [
            "--node", "scan-1", "--btsnoop", Self.fixture, "--speed", "max",
            "--broker", "mqtts://scan-1@localhost:\(broker.port)", "--ca-file", broker.caFile, "--topic-prefix", h.prefix,
        ], environment: ["PRESENCE_BROKER_PASSWORD_FILE": broker.passwordFile(of: "scan-1"), "PRESENCE_BROKER_URL": ""])
        #expect(await scanner.wait(timeout: .seconds(30)) == 0, "scanner: \(scanner.stderr.suffix(1500))")
        try await reader.wait(15, for: "alice's enter at desk-1") { messages in
            messages.contains { $0.topic == h.topics.event(beacon: "desk-1", user: "alice") && $0.text.contains(#""event":"enter""#) }
        }
        #expect(try h.rows("SELECT user_key, beacon_key FROM presence.sessions") == ["alice|desk-1"])
        // The ACL lets the aggregator publish the zones' events and states and readers read them.
        try await reader.wait(15, for: "alice's zone enter and the zone's state") { messages in
            messages.contains { $0.topic == h.topics.zoneEvent(zone: "lab-floor", user: "alice") && $0.text.contains(#""event":"enter""#) }
                && messages.contains { $0.topic == h.topics.zoneState("lab-floor") && $0.text.contains("alice") }
        }
        // The ACL lets the aggregator publish the fleet's health and readers read it.
        try await reader.wait(15, for: "the fleet health") { $0.contains { $0.topic == h.topics.health && $0.text.contains("scan-1") } }
        let password = try String(contentsOfFile: broker.passwordFile(of: "presence-aggregator"), encoding: .utf8)
        #expect(!aggregator.stderr.contains(password) && !aggregator.stdout.contains(password), "the aggregator logged its broker password")
        await aggregator.stop()
        await reader.stop()
        await broker.stop()
    }

    @Test(arguments: [
        (["--broker", "mqtt://n1@127.0.0.1:1", "--ca-file", "/etc/hostname"], "--ca-file '/etc/hostname' needs an mqtts:// broker"),
        (["--broker", "mqtts://n1@127.0.0.1:1", "--ca-file", "/nonexistent/ca.crt"], "/nonexistent/ca.crt"),
        (["--broker", "mqtts://n1@127.0.0.1:1", "--ca-file", "/etc/hostname", "--cert", "/etc/hostname"], "--cert and --key go together"),
        (["--broker", "mqtts://n1@127.0.0.1:1", "--cert", "/etc/hostname", "--key", "/etc/hostname"], "needs --ca-file"),
        (["--broker", "mqtts://n1@127.0.0.1:1", "--broker-password-file", "/nonexistent/pw"], "/nonexistent/pw"),
        (["--broker", "mqtts://127.0.0.1:1", "--broker-password-file", "/etc/hostname"], "needs a user name"),
        (["--broker", "mqtts://n1:pw@127.0.0.1:1", "--broker-password-file", "/etc/hostname"], "keep only one"),
    ])
    func badCredentialFlagsAreRefusedInOneLineByEveryProgram(_ arguments: [String], _ named: String) async throws {
        let environment = ["PRESENCE_BROKER_URL": "", "PRESENCE_DATABASE_URL": "postgres://nobody@127.0.0.1:1/none", "PRESENCE_HASH_SECRET": ""]
        let runs: [(String, [String])] = [
            ("presence-scanner", ["--node", "n1", "--btsnoop", Self.fixture] + arguments),
            ("presence-aggregator", arguments),
            ("presencectl", ["record", "--out", "/dev/null"] + arguments),
        ]
        for (program, programArguments) in runs {
            let child = try ChildProcess.spawn(try PackagePaths.executable(program), programArguments, environment: environment)
            #expect(await child.wait() != 0, "\(program) accepted \(arguments)")
            #expect(child.stderr.split(separator: "\n").count == 1 && child.stderr.contains(named), "\(program): \(child.stderr)")
        }
    }

    @Test func theDatabaseURLCanComeFromAFileButNotFromTwoPlaces() async throws {
        let h = try PipelineHarness("dbfile")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("presence-db-\(UUID().uuidString)").path
        try (h.databaseURL + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let migrate = try ChildProcess.spawn(try PackagePaths.executable("presencectl"), ["migrate"],
                                             environment: ["PRESENCE_DATABASE_URL": "", "PRESENCE_DATABASE_URL_FILE": file])
        #expect(await migrate.wait() == 0, "\(migrate.stderr)")
        #expect(try h.rows("SELECT count(*) > 0 FROM presence.migrations") == ["t"])
        let both = try ChildProcess.spawn(try PackagePaths.executable("presencectl"), ["migrate", "--database", h.databaseURL, "--database-url-file", file])
        #expect(await both.wait() != 0)
        #expect(both.stderr.split(separator: "\n").count == 1 && both.stderr.contains("keep only one"), "\(both.stderr)")
        let missing = try ChildProcess.spawn(try PackagePaths.executable("presencectl"), ["migrate", "--database-url-file", "/nonexistent/db"])
        #expect(await missing.wait() != 0)
        #expect(missing.stderr.split(separator: "\n").count == 1 && missing.stderr.contains("/nonexistent/db"), "\(missing.stderr)")
    }
}
