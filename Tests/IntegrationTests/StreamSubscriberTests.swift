import Foundation
import Logging
import PresenceMQTT
import Synchronization
import Testing

/// The stream subscriber against the real broker: every message of a fast stream arrives, in order
/// and whole; it reconnects when the broker drops it; it refuses a TLS broker.
@Suite struct StreamSubscriberTests {
    final class Received: Sendable {
        let messages = Mutex<[MQTTMessage]>([])
        let reads = Mutex(0)
        var count: Int { messages.withLock { $0.count } }
    }

    static func subscriber(_ url: String, clientID: String, filters: [String], into received: Received) throws -> StreamSubscriber {
        var logger = Logger(label: "test.mqtt.stream")
        logger.logLevel = .notice
        return try StreamSubscriber(broker: MQTTBroker(url: try MQTTURL(parsing: url)), clientID: clientID, filters: filters, keepAlive: 4,
                                    reconnectDelayMax: 1, logger: logger) { messages in
            received.messages.withLock { $0 += messages.messages }
            received.reads.withLock { $0 += 1 }
        }
    }

    @Test func aFastStreamArrivesWholeInOrderInFewReads() async throws {
        let broker = try TestServers.get().brokerURL
        let topic = uniqueTopic()
        let received = Received()
        let subscriber = try Self.subscriber(broker, clientID: "stream-\(UUID().uuidString.prefix(8))", filters: ["\(topic)/+/BTtoMQTT/+"], into: received)
        subscriber.start()
        try await eventually(10, "the stream subscriber to subscribe") { subscriber.isConnected }
        let publisher = try makeMQTTClient(broker, "pub")
        try publisher.start()
        try await within(10, "the publisher") { try await publisher.waitUntilConnected() }
        let sent = (0 ..< 5_000).map { index in
            MQTTMessage(topic: "\(topic)/gw-\(index % 3)/BTtoMQTT/\(index)", payload: Array(#"{"id":"aa:bb:cc:dd:ee:ff","rssi":-\#(index % 90)}"#.utf8), qos: 0)
        }
        for message in sent { try publisher.publishWithoutAcknowledgement(message) }
        // Not matching the filter: never delivered.
        try publisher.publishWithoutAcknowledgement(MQTTMessage(topic: "\(topic)/gw/other", payload: [1], qos: 0))
        try await eventually(20, "5,000 messages") { received.count >= 5_000 }
        try await Task.sleep(for: .milliseconds(300))
        let messages = received.messages.withLock { $0 }
        #expect(messages.map(\.topic) == sent.map(\.topic))
        #expect(messages.map(\.payload) == sent.map(\.payload))
        #expect(received.reads.withLock { $0 } < 2_500, "messages came in \(received.reads.withLock { $0 }) reads")
        await publisher.stop()
        await subscriber.stop()
        #expect(!subscriber.isConnected)
    }

    @Test func itReconnectsWhenTheBrokerDropsIt() async throws {
        let broker = try TestServers.get().brokerURL
        let topic = uniqueTopic()
        let clientID = "stream-\(UUID().uuidString.prefix(8))"
        let received = Received()
        let subscriber = try Self.subscriber(broker, clientID: clientID, filters: ["\(topic)/#"], into: received)
        subscriber.start()
        try await eventually(10, "the first connection") { subscriber.isConnected }
        // Another client with the same id takes the session over: the broker drops the first.
        let usurper = try makeMQTTClient(broker, "usurper") { $0.clientID = clientID }
        try usurper.start()
        try await within(10, "the usurper") { try await usurper.waitUntilConnected() }
        await usurper.stop()
        let publisher = try makeMQTTClient(broker, "pub")
        try publisher.start()
        try await within(10, "the publisher") { try await publisher.waitUntilConnected() }
        try await eventually(15, "a message after the reconnect") {
            try? publisher.publishWithoutAcknowledgement(MQTTMessage(topic: "\(topic)/after", payload: [2], qos: 0))
            return received.messages.withLock { $0.contains { $0.topic == "\(topic)/after" } }
        }
        await publisher.stop()
        await subscriber.stop()
    }

    @Test func aTLSBrokerIsLeftToTheLibmosquittoClient() {
        #expect(throws: MQTTError.self) {
            try StreamSubscriber(broker: MQTTBroker(url: MQTTURL(host: "localhost", tls: true)), clientID: "x", filters: ["a"], logger: Logger(label: "t")) { _ in }
        }
    }
}
