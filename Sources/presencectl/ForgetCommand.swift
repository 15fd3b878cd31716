import ArgumentParser
import Foundation
import Logging
import PresenceCLI
import PresenceCore
import PresenceDatabaseCLI
import PresenceMQTT
import PresenceStore
import Synchronization

extension UserCommand {
    struct Forget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Erase a user: every row of theirs in one transaction, and what the broker retains about them.",
            discussion: """
                Deletes the user, their devices, sessions, events and notifications in one transaction, and records an erasure \
                (which says nothing of whom) so that a running aggregator drops them without writing or publishing anything new \
                about them. Then clears the broker's retained state: the user's state topic, their key in every beacon's and zone's state, \
                their Home Assistant tracker under --ha-prefix, and their devices in the fleet's health (needs a broker login \
                that may write state, health and that prefix, such as presence-aggregator's). Safe to repeat: a user the registry \
                no longer knows still has the broker cleared.
                """)
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var homeAssistant: HomeAssistantPrefix
        @Argument(help: "The user's key.") var key: String

        func run() async throws {
            let key = try Slug(key, what: "user")
            print(try await Self.forget(key, connection: connection, homeAssistant: homeAssistant))
        }

        /// Forgets `key` in the database, then on the broker; returns what was done, in one line.
        static func forget(_ key: Slug, connection: ConnectionOptions, homeAssistant: HomeAssistantPrefix) async throws -> String {
            let broker = try connection.mqttBroker()
            let topics = try connection.topics()
            let assistant = try homeAssistant.topics()
            let devices = try await withDatabase(connection) { try await $0.forgetUser(key) }
            let cleared = try await RetainedErasure(broker: broker, topics: topics, homeAssistant: assistant).clear(user: key.value, devices: Set(devices))
            return "forgot user \(key) (\(devices.count) device\(devices.count == 1 ? "" : "s")); cleared their retained state and \(cleared.beacons) beacon state\(cleared.beacons == 1 ? "" : "s")"
                + (cleared.zones > 0 ? ", \(cleared.zones) zone state\(cleared.zones == 1 ? "" : "s")" : "")
                + (cleared.health ? ", and their devices from the fleet health" : "")
        }
    }
}

/// Clears what a broker retains about a user: their `state/users` topic, their key in the
/// retained `state/beacons` and `zones/state` states, which are published again without it, their Home Assistant
/// tracker (config first, so that Home Assistant drops the entity, then its state), and their
/// devices in the retained fleet health (the venue's, and each aggregator's part while several
/// share it), published again without them.
struct RetainedErasure {
    let broker: MQTTBroker
    let topics: Topics
    let homeAssistant: HomeAssistantTopics

    /// Returns how many beacon and zone states listed the user, and whether the health named their `devices`.
    func clear(user: String, devices: Set<String>) async throws -> (beacons: Int, zones: Int, health: Bool) {
        let logger = Logger(label: "presencectl")
        var mqtt = MQTTConfiguration(broker: broker, clientID: "presencectl-forget-\(getpid())")
        mqtt.subscriptions = [MQTTSubscription("\(topics.prefix)/v1/state/beacons/+", qos: 1), MQTTSubscription(topics.allZoneStates, qos: 1),
                              MQTTSubscription(topics.health + "/#", qos: 1)]
        let client = try MQTTClient(configuration: mqtt, logger: logger)
        try client.start()
        defer { Task { await client.stop() } }
        try await client.waitUntilConnected()
        let retained = await Self.retained(client.messages)
        var listed = 0
        var zones = 0
        var health = false
        for message in retained {
            if message.topic == topics.health || message.topic.hasPrefix(topics.healthPartPrefix) {
                guard let without = Self.health(message.payload, without: devices) else { continue }
                health = true
                try await client.publish(MQTTMessage(topic: message.topic, payload: without, qos: 1, retain: true))
                continue
            }
            if let state = Self.zoneState(message.payload) {
                guard state.users.contains(user) else { continue }
                zones += 1
                let without = ZoneState(zone: state.zone, users: state.users.filter { $0 != user })
                try await client.publish(MQTTMessage(topic: message.topic, payload: without.encoded(), qos: 1, retain: true))
                continue
            }
            guard let state = Self.beaconState(message.payload), state.users.contains(user) else { continue }
            listed += 1
            let without = BeaconState(beacon: state.beacon, users: state.users.filter { $0 != user })
            try await client.publish(MQTTMessage(topic: message.topic, payload: without.encoded(), qos: 1, retain: true))
        }
        for topic in [topics.userState(user)] + homeAssistant.userTopics(user) {
            try await client.publish(MQTTMessage(topic: topic, payload: [], qos: 1, retain: true))
        }
        await client.stop()
        return (listed, zones, health)
    }

    /// The retained messages the broker sends on subscribing: read until none has come for
    /// 700 ms (at least a second, at most ten), the last one per topic.
    private static func retained(_ messages: MQTTMessages) async -> [MQTTMessage] {
        let received = Mutex<(messages: [String: MQTTMessage], last: ContinuousClock.Instant)>(([:], .now))
        let reader = Task {
            for await message in messages where message.retain {
                received.withLock {
                    $0.messages[message.topic] = message
                    $0.last = .now
                }
            }
        }
        let start = ContinuousClock.now
        while ContinuousClock.now - start < .seconds(10) {
            try? await Task.sleep(for: .milliseconds(100))
            let quiet = received.withLock { ContinuousClock.now - $0.last }
            if ContinuousClock.now - start >= .seconds(1), quiet >= .milliseconds(700) { break }
        }
        reader.cancel()
        return received.withLock { state in state.messages.keys.sorted().compactMap { state.messages[$0] } }
    }

    /// The retained health `payload` again without `devices`, or nil when it names none of them;
    /// one that cannot be read but names them is cleared (empty).
    private static func health(_ payload: [UInt8], without devices: Set<String>) -> [UInt8]? {
        guard let report = try? JSONDecoder().decode(FleetReport.self, from: Data(payload)) else {
            let text = String(decoding: payload, as: UTF8.self)
            return devices.contains { text.contains($0) || ($0.hasPrefix("node:") && text.contains(String($0.dropFirst(5)))) } ? [] : nil
        }
        return report.forgetting(devices)?.encoded()
    }

    /// A retained ZoneState payload, or nil when it is not one.
    private static func zoneState(_ payload: [UInt8]) -> ZoneState? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
              let zone = object["zone"] as? String, let users = object["users"] as? [String] else { return nil }
        return ZoneState(zone: zone, users: users)
    }

    /// A retained BeaconState payload, or nil when it is not one.
    private static func beaconState(_ payload: [UInt8]) -> BeaconState? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
              let beacon = object["beacon"] as? String, let users = object["users"] as? [String] else { return nil }
        return BeaconState(beacon: beacon, users: users)
    }
}
