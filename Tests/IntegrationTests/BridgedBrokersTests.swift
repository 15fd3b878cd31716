import Foundation
import PresenceCore
import PresenceMQTT
import Testing

extension EndToEndTests {
    /// Two mosquitto brokers bridged as a venue runs them (docs/mqtt.md, "Bridged and clustered
    /// brokers"): nodes publish on the hall broker, the aggregator works on the central one. What the
    /// nodes say reaches the aggregator, the shard count and what the aggregator publishes come back,
    /// the central broker away for 8 s in the middle of a walk loses and doubles nothing and dates a
    /// move made meanwhile by its sightings, and the example hall configuration bridges over TLS to
    /// the secured central broker.
    @Suite struct BridgedBrokersTests {
        typealias Outage = AggregatorOutageTests

        /// The nodes that publish their status and stats: a, b and c online, d offline.
        static let onlineNodes = ["node-a", "node-b", "node-c"]
        static let reportsPerSecond = 12.5

        /// Says, as the nodes would on the hall broker, that a, b and c are online and d offline
        /// (retained), then publishes a, b and c's stats (their heartbeat) every second until cancelled.
        static func heartbeats(_ publisher: MQTTClient, _ h: PipelineHarness) -> Task<Void, any Error> {
            Task {
                let started = nowMilliseconds()
                for node in onlineNodes {
                    let status = ServiceStatus(state: .online, details: [("node", node), ("version", "test"), ("adapter", "test")], numbers: [("started", started)])
                    try await publisher.publish(MQTTMessage(topic: h.topics.nodeStatus(node: node), payload: status.encoded(), qos: 1, retain: true))
                }
                let offline = ServiceStatus(state: .offline, details: [("node", "node-d")])
                try await publisher.publish(MQTTMessage(topic: h.topics.nodeStatus(node: "node-d"), payload: offline.encoded(), qos: 1, retain: true))
                while !Task.isCancelled {
                    for node in onlineNodes {
                        let stats = NodeStatistics(node: node, uptime: nowMilliseconds() - started, reportsPerSecond: reportsPerSecond, sightings: 0)
                        try publisher.publishWithoutAcknowledgement(MQTTMessage(topic: h.topics.nodeStats(node: node), payload: stats.encoded(), qos: 0))
                    }
                    try await Task.sleep(for: .seconds(1))
                }
            }
        }

        /// Whether the fleet's health last seen on `bus` has a, b and c online at their stats' rate
        /// and d offline: the nodes' status and stats reached the aggregator.
        static func nodesInHealth(_ bus: BusRecorder, _ h: PipelineHarness) -> Bool {
            guard let nodes = bus.objects(on: h.topics.health).last?["nodes"] as? [[String: Any]] else { return false }
            func state(_ key: String) -> [String: Any]? { nodes.first { $0["node"] as? String == key } }
            return onlineNodes.allSatisfy { state($0)?["state"] as? String == "online" && state($0)?["reports_per_s"] as? Double == reportsPerSecond }
                && state("node-d")?["state"] as? String == "offline"
        }

        /// Every sighting batch (whole or a part) seen on `bus`, as its topic and payload.
        static func batches(_ bus: BusRecorder, _ h: PipelineHarness) -> Set<String> {
            Set(bus.messages(on: "\(h.prefix)/v1/sightings/").map { "\($0.topic) \($0.text)" })
        }

        /// Each user's events on `bus`, in order: event, beacon and an exit's reason.
        static func timeline(_ bus: BusRecorder, _ h: PipelineHarness) -> [String: [String]] {
            Dictionary(grouping: bus.objects(on: "\(h.prefix)/v1/events/"), by: { $0["user"] as? String ?? "" })
                .mapValues { $0.map { "\($0["event"] ?? "") \($0["beacon"] ?? "")\(($0["reason"] as? String).map { " \($0)" } ?? "")" } }
        }

        @Test func aWalkThroughTheHallBrokerLosesDoublesAndPostdatesNothingWhileTheCentralBrokerIsAway() async throws {
            let central = try PrivateBroker.start(persistent: true)
            defer { central.remove() }
            let h = try PipelineHarness("bridged", broker: central.url)
            let hall = try PrivateBroker.hall(bridgedTo: central.url, prefix: h.prefix)
            defer { hall.remove() }
            let alice = AggregatorWalkTests.tag
            let bob = try AggregatorRobustnessTests.registerWithBob(h)
            try h.ctlOK("node", "add", "node-d", "--venue", "expo")
            let atCentral = try await h.recorder(persistent: true)
            let atHall = try await h.recorder(on: hall.url)
            // Health every 2 s: the nodes' rates, which change no problem, show within the test.
            let aggregator = try h.startAggregator(["--health-interval", "2s"])
            try await atHall.wait(20, for: "the aggregator's online status, bridged to the hall") { _ in
                Outage.status(atHall, h)?["state"] as? String == "online"
            }
            let publisher = try await h.publisher(on: hall.url)
            let heartbeat = Self.heartbeats(publisher, h)
            let people = Outage.Whereabouts()
            let done = Flag()
            people.put(alice, at: "node-a")
            people.put(bob, at: "node-b")
            let walking = Outage.walk(publisher, h, people, while: { !done.isSet })
            try await atCentral.wait(15, for: "alice and bob to enter") { _ in
                Set(Outage.events(atCentral, h)) == ["enter alice booth-a", "enter bob booth-b"]
            }
            try await atHall.wait(10, for: "the nodes' status and stats in the fleet's health, bridged back") { _ in Self.nodesInHealth(atHall, h) }

            // The central broker goes away for 8 s in the middle of the walk; alice walks to booth-c
            // while the nodes publish on the hall broker, which keeps their batches for the bridge.
            try central.stop()
            let stopped = nowMilliseconds()
            let before = Self.batches(atHall, h).count
            people.put(alice, at: "node-c")
            let moved = nowMilliseconds()
            try await atHall.wait(10, for: "four rounds of batches on the hall broker with the central one away") { _ in
                Self.batches(atHall, h).count >= before + 4 * 3
            }
            try await Task.sleep(for: .milliseconds(max(0, stopped + 8_000 - nowMilliseconds())))
            try central.restart()
            let restarted = nowMilliseconds()
            try await atCentral.wait(30, for: "alice's move to booth-c, decided on what the bridge kept and what followed") { _ in
                Outage.events(atCentral, h).contains("enter alice booth-c")
            }
            // The move is dated by the sightings' own times, not by when the bridge delivered them.
            let move = atCentral.objects(on: h.topics.event(beacon: "booth-c", user: "alice")).compactMap { ($0["at"] as? NSNumber)?.int64Value }
            #expect(move.count == 1 && move.allSatisfy { $0 >= moved - 500 && $0 <= moved + 3_000 },
                    "the central broker away \(restarted - stopped) ms; the enter at booth-c dated \(move.map { $0 - moved }) ms after the move\n\(aggregator.stderr.split(separator: "\n").filter { $0.contains("way in") || $0.contains("caught up") }.joined(separator: "\n"))")
            people.put(alice, at: nil)
            people.put(bob, at: nil)
            try await atCentral.wait(30, for: "both to time out") { _ in
                let events = Outage.events(atCentral, h)
                return events.contains("exit alice booth-c") && events.contains("exit bob booth-b")
            }
            done.set()
            try await walking.value
            heartbeat.cancel()

            // Every batch published on the hall broker reached the central one and the aggregator.
            let published = Self.batches(atHall, h)
            try await atCentral.wait(10, for: "every batch of the hall on the central broker") { _ in Self.batches(atCentral, h).isSuperset(of: published) }
            try await atCentral.wait(5, for: "the aggregator to count every batch") { _ in
                (atCentral.objects(on: h.topics.aggregatorStats).last?["batches"] as? Int ?? 0) >= published.count
            }
            // Every decision once: no event lost or published twice, bob (who stayed) entered once.
            let expected = ["alice": ["enter booth-a", "exit booth-a moved", "enter booth-c", "exit booth-c timeout"],
                            "bob": ["enter booth-b", "exit booth-b timeout"]]
            #expect(Self.timeline(atCentral, h) == expected)
            #expect(try h.rows("SELECT user_key || ' ' || beacon_key || ' ' || exit_reason FROM presence.sessions ORDER BY user_key, entered_at")
                    == ["alice booth-a moved", "alice booth-c timeout", "bob booth-b timeout"])
            #expect(try h.rows("SELECT count(*), count(DISTINCT id) FROM presence.events") == ["6|6"])
            // The hall's subscribers see the same events through the bridge (a repeated id at most,
            // which QoS 1 allows and the id lets them drop).
            let ids = { (bus: BusRecorder) in bus.objects(on: "\(h.prefix)/v1/events/").compactMap { $0["id"] as? String } }
            var seen = Set<String>()
            #expect(ids(atHall).filter { seen.insert($0).inserted } == ids(atCentral))
            #expect(aggregator.poll() == nil, "the aggregator died: \(aggregator.stderr.suffix(2000))")
            #expect(await aggregator.stop() == 0)
            await publisher.stop()
            await atHall.stop()
            await atCentral.stop()
        }

        @Test func aNodeOnTheHallBrokerReadsTheShardCountThroughTheBridgeAndItsPartsReachTheAggregator() async throws {
            let central = try PrivateBroker.start(persistent: true)
            defer { central.remove() }
            let h = try PipelineHarness("bridgedshards", broker: central.url)
            let hall = try PrivateBroker.hall(bridgedTo: central.url, prefix: h.prefix)
            defer { hall.remove() }
            try SimulatedVenueTests.register(h)
            try h.ctlOK("shards", "--set", "4")
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("mini-\(h.prefix).json")
            try SimulatedVenueTests.scenario.write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }

            let atCentral = try await h.recorder()
            let atHall = try await h.recorder(on: hall.url)
            let aggregator = try h.startAggregator(["--absence-timeout", "4s"])
            try await atHall.wait(20, for: "the shard count the aggregator publishes on the central broker, on the hall broker") { messages in
                messages.contains { $0.topic == h.topics.config && $0.text == #"{"v":1,"shards":4}"# }
            }
            // The node connects to the hall broker after the count: it reads it retained there.
            let scanner = try ChildProcess.spawn(try PackagePaths.executable("presence-scanner"), ["--simulate", file.path],
                                                 environment: h.environment.merging(["PRESENCE_BROKER_URL": hall.url]) { $1 })
            try await atCentral.wait(60, for: "sam to leave stand-b") { messages in
                messages.contains { $0.topic == h.topics.event(beacon: "stand-b", user: "sam") && $0.text.contains("\"exit\"") }
            }
            let events = atCentral.objects(on: "\(h.prefix)/v1/events/").map { "\($0["event"] ?? "") \($0["beacon"] ?? "")" }
            #expect(events == ["enter stand-a", "exit stand-a", "enter stand-b", "exit stand-b"])
            #expect(await scanner.stop() == 0, "scanner: \(scanner.stderr.suffix(1500))")

            // On the hall broker, every batch after the node read the count is split into parts, each
            // on its shard's topic; every part reached the central broker.
            let levels = h.prefix.split(separator: "/").count
            func isPart(_ message: MQTTMessage) -> Bool { message.topic.split(separator: "/").count == levels + 4 }
            let batches = atHall.messages(on: "\(h.prefix)/v1/sightings/")
            let parts = batches.filter(isPart)
            #expect(parts.count > 10 && batches.drop { !isPart($0) }.allSatisfy(isPart),
                    "\(parts.count) parts; whole batches after the first part: \(batches.drop { !isPart($0) }.filter { !isPart($0) }.count)")
            for part in parts {
                let shard = Int(part.topic.split(separator: "/").last ?? "") ?? -1
                let sightings = (try? JSONSerialization.jsonObject(with: Data(part.payload)) as? [String: Any])?["sightings"] as? [[String: Any]] ?? []
                #expect(sightings.allSatisfy { Int(Shards.fnv1a32($0["id"] as? String ?? "") % 4) == shard }, "\(part.topic)")
            }
            let published = Self.batches(atHall, h)
            try await atCentral.wait(10, for: "every part of the hall on the central broker") { _ in Self.batches(atCentral, h).isSuperset(of: published) }
            #expect(await aggregator.stop() == 0)
            await atHall.stop()
            await atCentral.stop()
        }

        @Test func theExampleHallConfigurationBridgesOverTLSToTheSecuredCentralBroker() async throws {
            let h = try PipelineHarness("bridgeconf")
            try h.ctlOK("migrate")
            let central = try await ConfiguredBroker.deployed(prefix: h.prefix, database: h.databaseURL, bridges: ["hall-a"])
            let hall = try await ConfiguredBroker.hall("hall-a", prefix: h.prefix, nodes: ["node-a"], bridgedTo: central)
            let aggregatorSide = try await SecureBrokerTests.recorder(central, as: "presence-aggregator", prefix: h.prefix)
            let readerSide = try await SecureBrokerTests.recorder(hall, as: "presence-reader", prefix: h.prefix)
            let node = try await SecureBrokerTests.recorder(hall, as: "node-a", prefix: h.prefix)
            let aggregator = try await SecureBrokerTests.client(central, as: "presence-aggregator")
            /// Runs `step`; if it fails, the failure carries both brokers' logs.
            func showingLogs(_ step: () async throws -> Void) async throws {
                do {
                    try await step()
                } catch {
                    throw TestSetupError(message: "\(error)\nhall: \(hall.log.suffix(1500))\ncentral: \(central.log.suffix(1500))")
                }
            }

            // The shard count, retained on the central broker, reaches the node on the hall broker.
            try await aggregator.publish(MQTTMessage(topic: h.topics.config, payload: Array(#"{"v":1,"shards":4}"#.utf8), qos: 1, retain: true))
            try await showingLogs {
                try await node.wait(15, for: "the shard count on the hall broker") { $0.contains { $0.topic == h.topics.config } }
            }
            // The node's batch reaches the aggregator's account, and an event the hall's readers.
            try await node.client.publish(SecureBrokerTests.batch("node-a", rssi: -60), topics: h.topics)
            let event = h.topics.event(beacon: "booth-a", user: "alice")
            try await aggregator.publish(MQTTMessage(topic: event, payload: Array(#"{"v":1,"event":"enter"}"#.utf8)))
            try await showingLogs {
                try await aggregatorSide.wait(10, for: "node-a's batch on the central broker") { $0.contains { $0.topic == h.topics.sightings(node: "node-a") } }
                try await readerSide.wait(10, for: "the event on the hall broker") { $0.contains { $0.topic == event } }
            }
            await aggregator.stop()
            await node.stop()
            await readerSide.stop()
            await aggregatorSide.stop()
            await hall.stop()
            await central.stop()
        }
    }
}
