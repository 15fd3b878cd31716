import Foundation
import Logging
import PresenceCore
import PresenceMQTT
import Synchronization
import Testing

/// The inbound connection (swift-nio) against the real broker: every message of a fast stream
/// arrives, in order and whole, over plain TCP and TLS; it reconnects when the broker drops it;
/// it checks the broker's certificate; a filter the broker refuses is named and, once the broker
/// grants it, taken up; a kept session gets what came while it was away.
@Suite struct MQTTInboundConnectionTests {
    final class Received: Sendable {
        let messages = Mutex<[MQTTMessage]>([])
        let reads = Mutex(0)
        var count: Int { messages.withLock { $0.count } }
    }

    /// A running connection; cancel the task to stop it.
    static func connection(_ url: String, clientID: String = "inbound-\(UUID().uuidString.prefix(8))", filters: [String], qos: Int = 0,
                           caFile: String? = nil, into received: Received, _ configure: (inout MQTTInboundConnection.Configuration) -> Void = { _ in })
        throws -> (MQTTInboundConnection, Task<Void, any Error>) {
        var logger = Logger(label: "test.mqtt.inbound")
        logger.logLevel = .notice
        var configuration = MQTTInboundConnection.Configuration(broker: MQTTBroker(url: try MQTTURL(parsing: url), caFile: caFile), clientID: clientID,
                                                                subscriptions: filters.map { MQTTSubscription($0, qos: qos) })
        configuration.keepAlive = .seconds(4)
        configuration.retry = RetryPolicy(first: .milliseconds(200), longest: .seconds(1))
        configure(&configuration)
        let connection = try MQTTInboundConnection(configuration: configuration, logger: logger) { messages in
            received.messages.withLock { $0 += messages.messages }
            received.reads.withLock { $0 += 1 }
        }
        return (connection, Task { try await connection.run() })
    }

    /// A connected libmosquitto client of `url`, to publish with.
    static func publisher(_ url: String, caFile: String? = nil) async throws -> MQTTClient {
        let publisher = try makeMQTTClient(url, "pub") { $0.caFile = caFile }
        try publisher.start()
        try await within(10, "the publisher") { try await publisher.waitUntilConnected() }
        return publisher
    }

    /// Publishes 5,000 QoS 0 messages on `topic`'s levels (and one outside the filter) and checks
    /// that they all arrived, in order, whole, in far fewer reads.
    static func fastStream(_ broker: String, caFile: String? = nil) async throws {
        let topic = uniqueTopic()
        let received = Received()
        let (connection, task) = try Self.connection(broker, filters: ["\(topic)/+/BTtoMQTT/+"], caFile: caFile, into: received)
        try await eventually(10, "the connection to subscribe") { connection.isSubscribed }
        let publisher = try await Self.publisher(broker, caFile: caFile)
        let sent = (0 ..< 5_000).map { index in
            MQTTMessage(topic: "\(topic)/gw-\(index % 3)/BTtoMQTT/\(index)", payload: Array(#"{"id":"aa:bb:cc:dd:ee:ff","rssi":-\#(index % 90)}"#.utf8), qos: 0)
        }
        for message in sent { try publisher.publishWithoutAcknowledgement(message) }
        try publisher.publishWithoutAcknowledgement(MQTTMessage(topic: "\(topic)/gw/other", payload: [1], qos: 0))
        try await eventually(20, "5,000 messages") { received.count >= 5_000 }
        try await Task.sleep(for: .milliseconds(300))
        let messages = received.messages.withLock { $0 }
        #expect(messages.map(\.topic) == sent.map(\.topic))
        #expect(messages.map(\.payload) == sent.map(\.payload))
        #expect(received.reads.withLock { $0 } < 2_500, "messages came in \(received.reads.withLock { $0 }) reads")
        await publisher.stop()
        task.cancel()
        try await task.value
        #expect(!connection.isSubscribed && connection.status == MQTTInboundStatus())
    }

    @Test func aFastStreamArrivesWholeInOrderInFewReads() async throws {
        try await Self.fastStream(try TestServers.get().brokerURL)
    }

    @Test func aFastStreamArrivesWholeOverTLSCheckedAgainstTheCA() async throws {
        let broker = try await ConfiguredBroker.tls()
        try await Self.fastStream(broker.url, caFile: broker.caFile)
        // A CA that did not sign the broker's certificate: never subscribed, and it says why.
        let received = Received()
        let (stranger, task) = try Self.connection(broker.url, filters: ["a/#"], caFile: broker.otherCAFile, into: received)
        try await Task.sleep(for: .seconds(2))
        #expect(!stranger.isSubscribed && stranger.status.problem == "not connected to the broker")
        task.cancel()
        try await task.value
        await broker.stop()
    }

    @Test func itReconnectsWhenTheBrokerDropsIt() async throws {
        let broker = try TestServers.get().brokerURL
        let topic = uniqueTopic()
        let clientID = "inbound-\(UUID().uuidString.prefix(8))"
        let received = Received()
        let (connection, task) = try Self.connection(broker, clientID: clientID, filters: ["\(topic)/#"], into: received)
        try await eventually(10, "the first connection") { connection.isSubscribed }
        // Another client with the same id takes the session over: the broker drops the first.
        let usurper = try makeMQTTClient(broker, "usurper") { $0.clientID = clientID }
        try usurper.start()
        try await within(10, "the usurper") { try await usurper.waitUntilConnected() }
        await usurper.stop()
        let publisher = try await Self.publisher(broker)
        try await eventually(15, "a message after the reconnect") {
            try? publisher.publishWithoutAcknowledgement(MQTTMessage(topic: "\(topic)/after", payload: [2], qos: 0))
            return received.messages.withLock { $0.contains { $0.topic == "\(topic)/after" } }
        }
        await publisher.stop()
        task.cancel()
        try await task.value
    }

    @Test func aKeptSessionGetsTheQoS1MessagesThatCameWhileItWasAway() async throws {
        let broker = try TestServers.get().brokerURL
        let topic = uniqueTopic()
        let clientID = "inbound-\(UUID().uuidString.prefix(8))"
        let first = Received()
        let (connection, task) = try Self.connection(broker, clientID: clientID, filters: ["\(topic)/#"], qos: 1, into: first) { $0.cleanSession = false }
        try await eventually(10, "the first connection") { connection.isSubscribed }
        let publisher = try await Self.publisher(broker)
        try await publisher.publish(MQTTMessage(topic: "\(topic)/before", payload: [1], qos: 1))
        try await eventually(10, "the message before") { first.count == 1 }
        task.cancel()
        try await task.value
        for index in 0 ..< 3 { try await publisher.publish(MQTTMessage(topic: "\(topic)/away", payload: [UInt8(index)], qos: 1)) }
        let second = Received()
        let (again, secondTask) = try Self.connection(broker, clientID: clientID, filters: ["\(topic)/#"], qos: 1, into: second) { $0.cleanSession = false }
        try await eventually(10, "the three messages kept while away") { second.count == 3 && again.isSubscribed }
        #expect(second.messages.withLock { $0.map(\.payload) } == [[0], [1], [2]])
        await publisher.stop()
        secondTask.cancel()
        try await secondTask.value
    }

    @Test func aFilterTheBrokerRefusesIsNamedAndTakenUpOnceGranted() async throws {
        let broker = try await ConfiguredBroker.refusingSubscriptions(of: "reader", password: "secret", refused: ["later/#"])
        let received = Received()
        let url = "mqtt://reader:secret@127.0.0.1:\(broker.port)"
        let (connection, task) = try Self.connection(url, filters: ["granted/#", "later/#"], into: received)
        try await eventually(10, "the SUBACK") { connection.status.connected }
        #expect(connection.status.refused == [MQTTRefusal(filter: "later/#", code: 0x80)])
        #expect(connection.status.problem == "the broker refused the subscription to later/# (SUBACK return code 0x80: failure)")
        try await Task.sleep(for: .seconds(1))
        #expect(!connection.isSubscribed, "asked again, and refused again")
        // mosquitto's dynamic security disconnects a client whose role changed: the connection
        // comes back at once and subscribes again (a broker that keeps it gets the filter asked
        // for again under the retry policy: MQTTConnectionStateMachineTests).
        try await broker.grant("later/#", to: "reader")
        try await eventually(10, "the subscription granted") { connection.isSubscribed }
        let publisher = try await Self.publisher("mqtt://127.0.0.1:\(broker.port)")
        try await eventually(10, "a message on the filter granted later") {
            try? publisher.publishWithoutAcknowledgement(MQTTMessage(topic: "later/x", payload: [3], qos: 0))
            return received.messages.withLock { $0.contains { $0.topic == "later/x" } }
        }
        await publisher.stop()
        task.cancel()
        try await task.value
        await broker.stop()
    }

    @Test func valuesMQTTOrTLSWouldRefuseAreRefusedNamingThem() throws {
        func refusal(_ url: String, _ change: (inout MQTTInboundConnection.Configuration) -> Void = { _ in }) -> String {
            do {
                var configuration = MQTTInboundConnection.Configuration(broker: MQTTBroker(url: try MQTTURL(parsing: url)), clientID: "x",
                                                                        subscriptions: [MQTTSubscription("a")])
                change(&configuration)
                _ = try MQTTInboundConnection(configuration: configuration, logger: Logger(label: "t")) { _ in }
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal("mqtt://localhost") == "accepted")
        #expect(refusal("mqtt://localhost") { $0.broker.url.password = "p" }.contains("a password needs a user name"))
        #expect(refusal("mqtt://localhost") { $0.clientID = "" }.contains("client id"))
        #expect(refusal("mqtt://localhost") { $0.subscriptions = [] }.contains("no subscriptions"))
        #expect(refusal("mqtt://localhost") { $0.subscriptions = [MQTTSubscription("a", qos: 2)] }.contains("QoS 0 or 1"))
        #expect(refusal("mqtt://localhost") { $0.broker.caFile = "/etc/hostname" }.contains("need an mqtts:// broker"))
        #expect(refusal("mqtts://localhost") { $0.broker.caFile = "/nonexistent/ca.crt" }.contains("/nonexistent/ca.crt"))
    }
}
