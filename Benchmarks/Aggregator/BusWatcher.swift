import Foundation
import Logging
import PresenceCore
import PresenceMQTT
import Synchronization

/// A subscriber to the aggregator's events and stats that notes when each arrived.
final class BusWatcher: Sendable {
    /// An event as a subscriber sees it.
    struct Event: Sendable {
        var enter: Bool
        var user: String
        var beacon: String
        var received: Int64
    }

    /// The aggregator's stats message: counters and the decision-to-publish summary.
    struct Stats: Sendable {
        var received: Int64
        var sightings: Int
        var events: Int
        var latencyCount: Int
        var p50: Int
        var p99: Int
        var online: Bool
    }

    private struct Seen {
        var events: [Event] = []
        var stats: [Stats] = []
        var online = false
    }

    private let client: MQTTClient
    private let topics: Topics
    private let seen = Mutex(Seen())

    init(brokerURL: MQTTURL, topics: Topics, logger: Logger) throws {
        self.topics = topics
        var configuration = MQTTConfiguration(url: brokerURL, clientID: "bench-watcher-\(UInt32.random(in: .min ... .max))")
        configuration.subscriptions = [MQTTSubscription("\(topics.prefix)/v1/events/#", qos: 1), MQTTSubscription(topics.aggregatorStats, qos: 0),
                                       MQTTSubscription(topics.aggregatorStatus, qos: 1)]
        configuration.inboxBytes = 1 << 30
        client = try MQTTClient(configuration: configuration, logger: logger)
    }

    /// Connects and reads in the background until `stop()`.
    func start() async throws -> Task<Void, Never> {
        try client.start()
        try await client.waitUntilConnected()
        let eventsPrefix = "\(topics.prefix)/v1/events/"
        let statsTopic = topics.aggregatorStats
        let statusTopic = topics.aggregatorStatus
        return Task {
            for await message in client.messages {
                let now = WallClock.milliseconds()
                if message.topic.hasPrefix(eventsPrefix) {
                    let parts = message.topic.dropFirst(eventsPrefix.count).split(separator: "/")
                    guard parts.count == 2 else { continue }
                    let enter = message.payload.starts(with: Array(#"{"v":1,"event":"enter""#.utf8))
                    let event = Event(enter: enter, user: String(parts[1]), beacon: String(parts[0]), received: now)
                    seen.withLock { $0.events.append(event) }
                } else if message.topic == statsTopic, let stats = Self.stats(message.payload, at: now) {
                    seen.withLock { $0.stats.append(stats) }
                } else if message.topic == statusTopic {
                    let online = ServiceStatus.state(of: message.payload) == .online
                    seen.withLock { $0.online = online }
                }
            }
        }
    }

    func stop() async {
        await client.stop()
    }

    var events: [Event] { seen.withLock { $0.events } }
    var stats: [Stats] { seen.withLock { $0.stats } }
    var aggregatorOnline: Bool { seen.withLock { $0.online } }

    private static func stats(_ payload: [UInt8], at now: Int64) -> Stats? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any],
              let sightings = object["sightings"] as? Int, let events = object["events"] as? Int else { return nil }
        let latency = object["decision_to_publish_ms"] as? [String: Int] ?? [:]
        return Stats(received: now, sightings: sightings, events: events, latencyCount: latency["count"] ?? 0,
                     p50: latency["p50"] ?? 0, p99: latency["p99"] ?? 0, online: true)
    }
}
