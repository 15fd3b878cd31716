import Foundation
import Logging
import PresenceCore
import PresenceMQTT
import Synchronization
import Testing

@Suite struct MQTTClientTests {
    @Test(arguments: [MQTTProtocolVersion.v5, .v311])
    func binaryPayloadsMakeTheRoundTripAtQoS0And1(version: MQTTProtocolVersion) async throws {
        let broker = try TestServers.get().brokerURL
        let topic = uniqueTopic()
        let subscriber = try makeMQTTClient(broker, "sub") {
            $0.protocolVersion = version
            $0.subscriptions = [MQTTSubscription("\(topic)/#", qos: 1)]
        }
        let publisher = try makeMQTTClient(broker, "pub") { $0.protocolVersion = version }
        try subscriber.start()
        try publisher.start()
        try await within(10, "both connections") {
            try await subscriber.waitUntilConnected()
            try await publisher.waitUntilConnected()
        }

        let everyByte = (0...255).map(UInt8.init)
        let sent = [
            MQTTMessage(topic: "\(topic)/zero", payload: [0, 0xff, 0, 0x80, 0x0a, 0x0d], qos: 0),
            MQTTMessage(topic: "\(topic)/one", payload: everyByte + everyByte.reversed(), qos: 1),
            MQTTMessage(topic: "\(topic)/empty", payload: [], qos: 1),
        ]
        for message in sent {
            try await publisher.publish(message)
        }
        #expect(try await next(3, from: subscriber.messages) == sent)
        #expect(publisher.statistics.published == 3)
        #expect(subscriber.statistics.received == 3)
        await publisher.stop()
        await subscriber.stop()
    }

    @Test func aRetainedMessageReachesALaterSubscriberFlaggedRetained() async throws {
        let broker = try TestServers.get().brokerURL
        let topic = uniqueTopic()
        let publisher = try makeMQTTClient(broker, "pub")
        try publisher.start()
        try await within(10, "the publisher's connection") { try await publisher.waitUntilConnected() }
        try await publisher.publish(MQTTMessage(topic: "\(topic)/state", payload: Array("online".utf8), retain: true))
        try await publisher.publish(MQTTMessage(topic: "\(topic)/event", payload: Array("missed".utf8)))

        let subscriber = try makeMQTTClient(broker, "sub") { $0.subscriptions = [MQTTSubscription("\(topic)/#")] }
        try subscriber.start()
        try await within(10, "the subscriber's connection") { try await subscriber.waitUntilConnected() }
        try await publisher.publish(MQTTMessage(topic: "\(topic)/event", payload: Array("live".utf8)))

        let received = try await next(2, from: subscriber.messages)
        #expect(received.map(\.text) == ["online", "live"])
        #expect(received.map(\.retain) == [true, false])
        try await publisher.publish(MQTTMessage(topic: "\(topic)/state", payload: [], retain: true))
        await publisher.stop()
        await subscriber.stop()
    }

    @Test func theWillIsPublishedWhenTheConnectionIsCutButNotOnACleanStop() async throws {
        let broker = try PrivateBroker.start()
        defer { broker.remove() }
        let status = "presence/v1/nodes/n1/status"
        let client = try makeMQTTClient(broker.url, "node") {
            $0.will = MQTTMessage(topic: status, payload: Array("offline-will".utf8), retain: true)
            $0.birth = MQTTMessage(topic: status, payload: Array("online".utf8), retain: true)
        }
        try client.start()
        try await within(10, "the connection") { try await client.waitUntilConnected() }

        // An independent observer; the retained birth tells when it has subscribed.
        let observer = try ChildProcess.spawn("/usr/bin/mosquitto_sub", ["-h", "127.0.0.1", "-p", "\(broker.port)", "-q", "1", "-t", status])
        try await eventually(10, "the observer to see the birth") { observer.lines == ["online"] }

        #expect(cutConnections(toPort: broker.port) == 1)
        try await eventually(10, "the will, then the birth again after the reconnect") { observer.lines.count >= 3 }
        #expect(observer.lines == ["online", "offline-will", "online"])
        #expect(client.statistics.connects == 2)
        #expect(client.statistics.disconnects == 1)

        await client.stop(publishing: MQTTMessage(topic: status, payload: Array("offline-clean".utf8), retain: true))
        // The broker reads the DISCONNECT before this new connection's marker: a will would come first.
        let marker = try makeMQTTClient(broker.url, "marker")
        try marker.start()
        try await within(10, "the marker's connection") { try await marker.waitUntilConnected() }
        try await marker.publish(MQTTMessage(topic: status, payload: Array("marker".utf8)))
        await marker.stop()
        try await eventually(10, "the marker at the observer") { observer.lines.last == "marker" }
        #expect(observer.lines == ["online", "offline-will", "online", "offline-clean", "marker"])
        await observer.stop()
    }

    @Test func afterABrokerRestartTheSessionIsRestoredAndAQueuedQoS1MessageArrivesOnce() async throws {
        let broker = try PrivateBroker.start()
        defer { broker.remove() }
        let client = try makeMQTTClient(broker.url, "restart") {
            $0.birth = MQTTMessage(topic: "node/status", payload: Array("online".utf8), retain: true)
            $0.subscriptions = [MQTTSubscription("node/#")]
        }
        try client.start()
        try await within(10, "the connection") { try await client.waitUntilConnected() }
        #expect(try await next(1, from: client.messages).map(\.text) == ["online"])

        try broker.stop()
        try await eventually(10, "the client to notice the broker is gone") { !client.isConnected }
        let acknowledged = Flag()
        let sending = Task {
            try await client.publish(MQTTMessage(topic: "node/data", payload: Array("while-down".utf8)))
            acknowledged.set()
        }
        try await eventually(5, "the message to be handed to libmosquitto") { client.statistics.inFlight == 1 }
        try await Task.sleep(for: .milliseconds(300))
        #expect(!acknowledged.isSet, "publish returned while the broker was down")

        try broker.restart()
        try await within(15, "the acknowledgement after the restart") { try await sending.value }
        #expect(client.isConnected)
        #expect(client.statistics.connects == 2)
        try await client.publish(MQTTMessage(topic: "node/data", payload: Array("marker".utf8)))
        // The restarted broker knows nothing: these arrive only if the subscription was restored.
        let received = try await next(3, from: client.messages).map(\.text)
        #expect(received.sorted() == ["marker", "online", "while-down"])
        #expect(received.last == "marker")
        #expect(client.statistics.published == 2)
        await client.stop()
    }

    @Test func aWindowOf20Carries5000QoS1MessagesAllAcknowledgedNoneLostInOrder() async throws {
        let broker = try TestServers.get().brokerURL
        let topic = uniqueTopic()
        let subscriber = try makeMQTTClient(broker, "sub") { $0.subscriptions = [MQTTSubscription("\(topic)/#")] }
        let publisher = try makeMQTTClient(broker, "pub") { $0.maxInFlight = 20 }
        try subscriber.start()
        try publisher.start()
        try await within(10, "both connections") {
            try await subscriber.waitUntilConnected()
            try await publisher.waitUntilConnected()
        }

        // More publishing tasks than window slots, each publishing its own numbered sequence.
        let lanes = 25
        let perLane = 200
        // The deadline only catches a stall: alone this takes a quarter of a second, but CI runs it
        // beside sixty other suites on two cores.
        try await within(60, "5,000 acknowledgements") {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<lanes {
                    group.addTask {
                        for sequence in 0..<perLane {
                            let payload = [UInt8(lane), UInt8(sequence >> 8), UInt8(sequence & 0xff)]
                            try await publisher.publish(MQTTMessage(topic: "\(topic)/\(lane)", payload: payload))
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let statistics = publisher.statistics
        #expect(statistics.published == lanes * perLane)
        #expect(statistics.inFlight == 0)
        #expect(statistics.peakInFlight <= 20)
        #expect(statistics.peakInFlight > 1)

        let received = try await next(lanes * perLane, from: subscriber.messages, within: 60)
        var sequences = [[Int]](repeating: [], count: lanes)
        for message in received where message.payload.count == 3 && Int(message.payload[0]) < lanes {
            sequences[Int(message.payload[0])].append(Int(message.payload[1]) << 8 | Int(message.payload[2]))
        }
        #expect(sequences == [[Int]](repeating: Array(0..<perLane), count: lanes))
        await publisher.stop()
        await subscriber.stop()
    }

    @Test func sendKeepsManyMessagesInFlightInOrderAndReportsEveryAcknowledgement() async throws {
        let broker = try TestServers.get().brokerURL
        let topic = uniqueTopic()
        let subscriber = try makeMQTTClient(broker, "sub") { $0.subscriptions = [MQTTSubscription(topic, qos: 1)] }
        let publisher = try makeMQTTClient(broker, "pub") { $0.maxInFlight = 50 }
        try subscriber.start()
        try publisher.start()
        try await within(10, "both connections") {
            try await subscriber.waitUntilConnected()
            try await publisher.waitUntilConnected()
        }
        let count = 3_000
        let outcomes = Mutex<[Int: Int32]>([:])
        let started = ContinuousClock.now
        for number in 0 ..< count {
            try await publisher.send(MQTTMessage(topic: topic, payload: [UInt8(number >> 8), UInt8(number & 0xff)], qos: 1)) { result in
                outcomes.withLock { $0[number] = (try? result.get()) ?? -1 }
            }
        }
        let sending = ContinuousClock.now - started
        try await eventually(20, "every acknowledgement") { outcomes.withLock { $0.count } == count }
        #expect(outcomes.withLock { $0.values.allSatisfy { $0 >= 0 && $0 < 0x80 } })
        let received = try await next(count, from: subscriber.messages, within: 20)
        #expect(received.map { Int($0.payload[0]) << 8 | Int($0.payload[1]) } == Array(0 ..< count), "messages left out of order")
        let statistics = publisher.statistics
        #expect(statistics.published == count)
        #expect(statistics.peakInFlight > 1 && statistics.peakInFlight <= 50, "peak in flight \(statistics.peakInFlight)")
        #expect(sending < .seconds(20))
        await publisher.stop()
        await subscriber.stop()
    }

    @Test func sendFailsItsHandlersWhenTheClientStopsBeforeTheBrokerAnswers() async throws {
        let publisher = try makeMQTTClient("mqtt://127.0.0.1:\(try freePort())", "down") { $0.maxInFlight = 5 }
        try publisher.start()
        let failures = Mutex(0)
        for number in 0 ..< 5 {
            try await publisher.send(MQTTMessage(topic: "t/\(number)", payload: [1], qos: 1)) { result in
                if case .failure = result { failures.withLock { $0 += 1 } }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        await publisher.stop()
        #expect(failures.withLock { $0 } == 5)
        await #expect(throws: MQTTError.self) {
            try await publisher.send(MQTTMessage(topic: "t/late", payload: [1], qos: 1)) { _ in }
        }
    }

    @Test func aFullInboxDropsAndCountsNewMessagesAndKeepsTheOldest() async throws {
        let broker = try TestServers.get().brokerURL
        let topic = uniqueTopic()
        let subscriber = try makeMQTTClient(broker, "sub") {
            $0.subscriptions = [MQTTSubscription(topic)]
            $0.inboxBytes = 10 * (1 + topic.utf8.count + 64)
        }
        let publisher = try makeMQTTClient(broker, "pub")
        try subscriber.start()
        try publisher.start()
        try await within(10, "both connections") {
            try await subscriber.waitUntilConnected()
            try await publisher.waitUntilConnected()
        }
        for number in 0..<50 {
            try await publisher.publish(MQTTMessage(topic: topic, payload: [UInt8(number)]))
        }
        try await eventually(10, "all 50 messages at the subscriber") { subscriber.statistics.received == 50 }
        #expect(subscriber.statistics.droppedInbound == 40)
        #expect(subscriber.isConnected)

        await subscriber.stop()
        let kept = try await within(5, "the inbox to end after stop") {
            var kept: [UInt8] = []
            for await message in subscriber.messages { kept += message.payload }
            return kept
        }
        #expect(kept == Array(0..<10))
        await publisher.stop()
    }

    @Test func stopIsIdempotentEndsTheMessagesAndRefusesLaterCalls() async throws {
        let broker = try TestServers.get().brokerURL
        let topic = uniqueTopic()
        let client = try makeMQTTClient(broker, "stop") { $0.subscriptions = [MQTTSubscription(topic)] }
        try client.start()
        try await within(10, "the connection") { try await client.waitUntilConnected() }
        let consumer = Task {
            var count = 0
            for await _ in client.messages { count += 1 }
            return count
        }

        async let first: Void = client.stop()
        async let second: Void = client.stop()
        _ = await (first, second)
        await client.stop()

        #expect(try await within(5, "the messages to end") { await consumer.value } == 0)
        #expect(!client.isConnected)
        #expect(client.statistics.connects == 1)
        #expect(client.statistics.disconnects == 1)
        await #expect(throws: MQTTError.self) { try await client.publish(MQTTMessage(topic: topic, payload: [1])) }
        await #expect(throws: MQTTError.self) { try await client.waitUntilConnected() }
        #expect(throws: MQTTError.self) { try client.subscribe(MQTTSubscription("other")) }
        #expect(throws: MQTTError.self) { try client.start() }
    }

    @Test func withoutABrokerPublishesWaitInTheWindowAndEndByCancellationOrStop() async throws {
        // Nothing listens on port 1: every connection attempt is refused.
        let client = try makeMQTTClient("mqtt://127.0.0.1:1", "down") {
            $0.maxInFlight = 1
            $0.retry = RetryPolicy(first: .seconds(1), longest: .seconds(1))
        }
        try client.start()

        let connecting = Task { try await client.waitUntilConnected() }
        connecting.cancel()
        await #expect(throws: CancellationError.self) { try await connecting.value }

        // Cancelled while waiting for its PUBACK: still queued in libmosquitto, so it keeps its slot.
        let queued = Task { try await client.publish(MQTTMessage(topic: "t/1", payload: [1])) }
        try await eventually(5, "the first message to take the only slot") { client.statistics.inFlight == 1 }
        queued.cancel()
        await #expect(throws: CancellationError.self) { try await queued.value }
        #expect(client.statistics.inFlight == 1)

        // Cancelled while waiting for a slot.
        let waiting = Task { try await client.publish(MQTTMessage(topic: "t/2", payload: [2])) }
        try await Task.sleep(for: .milliseconds(200))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }

        // Still waiting for a slot when stop() comes: failed with MQTTError.
        let pending = Task { try await client.publish(MQTTMessage(topic: "t/3", payload: [3])) }
        try await Task.sleep(for: .milliseconds(200))
        let started = ContinuousClock.now
        await client.stop(publishing: MQTTMessage(topic: "t/status", payload: Array("offline".utf8), retain: true))
        let took = ContinuousClock.now - started
        #expect(took >= .seconds(4.5) && took < .seconds(30), "the final message is waited for about 5 s (30 s only catches a stop that never ends)")
        await #expect(throws: MQTTError.self) { try await pending.value }
        #expect(client.statistics.inFlight == 0)
        #expect(client.statistics.connects == 0)
    }

    @Test func overTLSTheBrokerIsVerifiedAgainstTheGivenCA() async throws {
        let broker = try await ConfiguredBroker.tls()
        let topic = uniqueTopic()
        let client = try makeMQTTClient(broker.url, "tls") {
            $0.caFile = broker.caFile
            $0.subscriptions = [MQTTSubscription(topic)]
        }
        try client.start()
        try await within(10, "the TLS connection") { try await client.waitUntilConnected() }
        try await client.publish(MQTTMessage(topic: topic, payload: Array("over tls".utf8)))
        #expect(try await next(1, from: client.messages).map(\.text) == ["over tls"])
        await client.stop()
        await broker.stop()
    }

    @Test(arguments: [true, false])
    func overTLSAnUntrustedBrokerIsRefused(withOtherCA: Bool) async throws {
        let broker = try await ConfiguredBroker.tls()
        // Another CA, or the operating system's certificates: neither signed the broker's certificate.
        let client = try makeMQTTClient(broker.url, "untrusted") { $0.caFile = withOtherCA ? broker.otherCAFile : nil }
        try client.start()
        let connecting = Task { try await client.waitUntilConnected() }
        try await eventually(10, "the broker to see the handshake fail") { broker.log.contains("alert unknown ca") }
        #expect(!client.isConnected)
        #expect(client.statistics.connects == 0)
        connecting.cancel()
        await #expect(throws: CancellationError.self) { try await connecting.value }
        await client.stop()
        await broker.stop()
    }

    @Test(arguments: [MQTTProtocolVersion.v5, .v311])
    func theURLsCredentialsAreUsedAndARefusalIsReported(version: MQTTProtocolVersion) async throws {
        let broker = try await ConfiguredBroker.withPassword(user: "scanner", password: "p@ss:w/rd")
        let good = try makeMQTTClient("mqtt://scanner:p%40ss%3Aw%2Frd@127.0.0.1:\(broker.port)", "good") { $0.protocolVersion = version }
        try good.start()
        try await within(10, "the connection with the right password") { try await good.waitUntilConnected() }
        await good.stop()

        let bad = try makeMQTTClient("mqtt://scanner:wrong@127.0.0.1:\(broker.port)", "bad") { $0.protocolVersion = version }
        try bad.start()
        switch version {
        case .v5:
            // libmosquitto 2.0.11 treats a refused MQTT 5 CONNACK as a protocol error and stops
            // its network thread: the refusal must reach the caller instead of a silent hang.
            await #expect {
                try await within(10, "the refusal") { try await bad.waitUntilConnected() }
            } throws: { error in
                (error as? MQTTError)?.code == 135 && "\(error)".contains("Not authorized")
            }
            await #expect(throws: MQTTError.self) { try await bad.publish(MQTTMessage(topic: "t", payload: [1])) }
        case .v311:
            // MQTT 3.1.1 refusals are retried with back-off.
            let connecting = Task { try await bad.waitUntilConnected() }
            try await eventually(10, "a second attempt") { broker.log.components(separatedBy: "not authorised").count > 2 }
            connecting.cancel()
            await #expect(throws: CancellationError.self) { try await connecting.value }
        }
        #expect(!bad.isConnected)
        await bad.stop()
        await broker.stop()
    }

    @Test func aFirstConnectionAttemptThatFailsAtOnceIsRetried() async throws {
        // The name cannot resolve: mosquitto_connect_async fails before any socket exists, after
        // which libmosquitto alone would never try again.
        let recorder = LogRecorder()
        var configuration = MQTTConfiguration(url: try MQTTURL(parsing: "mqtt://no-such-broker.invalid"), clientID: "dns")
        configuration.retry = RetryPolicy(first: .seconds(1), longest: .seconds(10))
        let client = try MQTTClient(configuration: configuration, logger: recorder.logger("dns"))
        try client.start()
        // The first attempt fails in start(); the retries follow pauses of 1 s and 2 s (the retry
        // policy's, doubling); the next pause is 4 s.
        try await eventually(15, "three failed attempts") {
            recorder.recorded.filter { $0.hasPrefix("warning: connection attempt failed") }.count >= 3
        }
        #expect(recorder.recorded.allSatisfy { !$0.contains("connection attempt under way") })
        let started = ContinuousClock.now
        await client.stop()
        #expect(ContinuousClock.now - started < .seconds(2), "stop does not wait out the 4 s back-off")
        #expect(!client.isConnected)
    }

    @Test func anMQTT5ConnectionTheBrokerDisconnectsWithAReasonConnectsAgain() async throws {
        // mosquitto's dynamic security disconnects the clients of a user whose role changes, with
        // a DISCONNECT (0x98, administrative action), after which libmosquitto 2.0.11 would never
        // try again by itself.
        let broker = try await ConfiguredBroker.refusingSubscriptions(of: "kicked", password: "secret", refused: ["a/#"])
        let recorder = LogRecorder()
        var configuration = MQTTConfiguration(url: try MQTTURL(parsing: "mqtt://kicked:secret@127.0.0.1:\(broker.port)"), clientID: "kicked")
        configuration.retry = RetryPolicy(first: .seconds(1), longest: .seconds(2))
        let client = try MQTTClient(configuration: configuration, logger: recorder.logger("kicked"))
        try client.start()
        try await within(10, "the first connection") { try await client.waitUntilConnected() }
        try await broker.grant("a/#", to: "kicked")
        try await eventually(10, "the DISCONNECT") { recorder.recorded.contains { $0.contains("Administrative action") } }
        try await within(15, "the connection again") { try await client.waitUntilConnected() }
        #expect(client.isConnected && client.statistics.connects == 2)
        await client.stop()
        #expect(!client.isConnected)
        await broker.stop()
    }

    @Test func badConfigurationIsRefusedNamingTheValue() throws {
        let url = try MQTTURL(parsing: "mqtt://127.0.0.1")
        func refusal(_ change: (inout MQTTConfiguration) -> Void) -> String {
            var configuration = MQTTConfiguration(url: url, clientID: "bad")
            change(&configuration)
            do {
                _ = try MQTTClient(configuration: configuration, logger: .init(label: "test"))
                return "accepted"
            } catch {
                return error.description
            }
        }
        #expect(refusal { $0.maxInFlight = 0 }.contains("maxInFlight 0"))
        #expect(refusal { $0.retry = RetryPolicy(first: .seconds(1), longest: .seconds(100_000)) }.contains("longest reconnect wait"))
        #expect(refusal { $0.will = MQTTMessage(topic: "a/#", payload: []) }.contains("\"a/#\""))
        #expect(refusal { $0.subscriptions = [MQTTSubscription("a/b", qos: 3)] }.contains("QoS 3"))
        #expect(refusal { $0.subscriptions = [MQTTSubscription("a/#/b")] }.contains("\"a/#/b\""))
        #expect(refusal { _ in } == "accepted")
    }
}
