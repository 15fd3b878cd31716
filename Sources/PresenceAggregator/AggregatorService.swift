import Logging
import PresenceCore
import PresenceMQTT
import PresencePostgres
import PresenceStore
import ServiceLifecycle
import Synchronization

/// The aggregator: reads sightings from the broker, decides presence with the pipeline, records
/// sessions and events in PostgreSQL and publishes events and retained state. On start it resumes
/// open sessions and publishes what an earlier run left unpublished; on shutdown it stops taking
/// sightings, finishes recording and publishing, and marks itself offline.
public final class AggregatorService: Service {
    private let configuration: AggregatorConfiguration
    private let logger: Logger

    public init(configuration: AggregatorConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// What the main loop reacts to.
    enum Input: Sendable {
        case message(MQTTMessage, receivedAt: Int64)
        case tick(Int64)
        case registryChanged
    }

    public func run() async throws {
        let database = try await connectDatabase()
        try await requireSchema(database)
        let registry = try await database.loadRegistry()
        let sessions = try await database.openSessions()
        let clientID = configuration.effectiveClientID
        let now = WallClock.milliseconds()
        let saved = try await database.savedClock(clientID: clientID)
        let start = min(saved ?? now, now)

        var loop = AggregatorLoop(configuration: configuration, registry: registry, start: start, logger: logger)
        let resumeExits = loop.pipeline.resume(sessions, at: start)
        let restored = loop.board.restore(sessions, beacons: Array(registry.beacons.keys))
        logger.notice("resumed open sessions", metadata: ["sessions": "\(sessions.count)", "ended": "\(resumeExits.count)",
                                                          "clock_behind_ms": "\(now - start)"])

        let mqtt = try MQTTClient(configuration: mqttConfiguration(), logger: logger)
        try mqtt.start()
        let outbox = Outbox(database: database, mqtt: mqtt, topics: configuration.topics, clientID: clientID, logger: logger)
        outbox.submit(.states(restored, deletedBeacons: []))
        loop.notifications = NotificationPolicy(cooldown: configuration.notificationCooldown,
                                                sent: try await database.recentNotifications(within: configuration.notificationCooldown))
        loop.outbox = outbox
        loop.submit(resumeExits)

        let listener = PostgresListener(configuration: configuration.database, channels: ["presence_registry"], logger: logger)
        listener.start()

        let loopDrops = DropCounter()
        loop.inbound = { [mqtt] in (mqtt.statistics, loopDrops.count) }
        let (inputs, feed) = AsyncStream.makeStream(of: Input.self, bufferingPolicy: .bufferingOldest(200_000))
        async let outboxDone: Void = outbox.run()
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await message in mqtt.messages {
                        if case .dropped = feed.yield(.message(message, receivedAt: WallClock.milliseconds())) {
                            loopDrops.add()
                        }
                    }
                }
                group.addTask {
                    for await _ in listener.events {
                        feed.yield(.registryChanged)
                    }
                }
                group.addTask { [tick = configuration.pipeline.tickInterval] in
                    while !Task.isCancelled {
                        let now = WallClock.milliseconds()
                        let next = (now / tick + 1) * tick
                        do {
                            try await Task.sleep(for: .milliseconds(next - now))
                        } catch {
                            return
                        }
                        feed.yield(.tick(WallClock.milliseconds()))
                    }
                }
                for await input in inputs {
                    await loop.handle(input, database: database)
                }
                group.cancelAll()
            }
        } onGracefulShutdown: {
            feed.finish()
        }

        logger.notice("shutting down: finishing what is recorded and in flight")
        outbox.finish()
        listener.stop()
        let offline = MQTTMessage(topic: configuration.topics.aggregatorStatus, payload: ServiceStatus(state: .offline).encoded(), qos: 1, retain: true)
        let deadline = Task {
            try await Task.sleep(for: .seconds(10))
            logger.warning("the broker did not acknowledge everything in time; the rest is published after the next start")
            await mqtt.stop(publishing: offline)
        }
        await outboxDone
        deadline.cancel()
        await mqtt.stop(publishing: offline)
        await database.close()
        loop.logStatistics()
    }

    private func mqttConfiguration() -> MQTTConfiguration {
        let topics = configuration.topics
        var mqtt = MQTTConfiguration(url: configuration.broker, clientID: configuration.effectiveClientID)
        mqtt.cleanSession = configuration.cleanSession
        // A persistent session needs, under MQTT 5, a session-expiry CONNECT property, which
        // libmosquitto's asynchronous connect cannot send; under 3.1.1 the broker keeps a session
        // without clean-session for as long as it is configured to.
        if !configuration.cleanSession { mqtt.protocolVersion = .v311 }
        mqtt.will = MQTTMessage(topic: topics.aggregatorStatus, payload: ServiceStatus(state: .offline).encoded(), qos: 1, retain: true)
        mqtt.birth = MQTTMessage(topic: topics.aggregatorStatus, payload: ServiceStatus(state: .online).encoded(), qos: 1, retain: true)
        mqtt.subscriptions = [MQTTSubscription(topics.allSightings, qos: 1), MQTTSubscription(topics.allNodeStatuses, qos: 1),
                              MQTTSubscription(topics.allNodeStats, qos: 0)]
        return mqtt
    }

    /// Connects, retrying with back-off while the database is unreachable.
    private func connectDatabase() async throws -> PostgresConnection {
        var delay = 1
        while true {
            do {
                return try await PostgresConnection.connect(configuration.database, logger: logger)
            } catch let error as PostgresError where error.isConnectionFailure {
                logger.error("cannot reach the database; retrying", metadata: ["error": "\(error)", "retry_in_s": "\(delay)"])
                try await Task.sleep(for: .seconds(delay))
                delay = min(delay * 2, 30)
            }
        }
    }

    private func requireSchema(_ database: PostgresConnection) async throws {
        let needed = Migration.all.map(\.version).max() ?? 0
        let current: Int
        do {
            current = try await database.query("SELECT COALESCE(max(version), 0) FROM presence.migrations").rows.first?.int(0) ?? 0
        } catch let error as PostgresError where error.sqlState == "42P01" || error.sqlState == "3F000" {
            current = 0
        }
        guard current >= needed else {
            throw AggregatorError("the database schema is at version \(current) but this aggregator needs \(needed): run `presencectl migrate` first")
        }
    }
}

/// Counts inbound messages the decision loop's queue had no room for.
final class DropCounter: Sendable {
    private let value = Atomic<Int>(0)

    func add() {
        value.add(1, ordering: .relaxed)
    }

    var count: Int {
        value.load(ordering: .relaxed)
    }
}

/// Why the aggregator cannot run.
public struct AggregatorError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) {
        self.description = description
    }
}
