import Logging
import PresenceCore
import PresenceMQTT
import PresencePostgres
import PresenceStore
import ServiceLifecycle

/// Makes events durable, then publishes them, over its own database and broker connections:
/// each decided record's events are recorded in PostgreSQL (with the session changes) before
/// anything goes to the broker; events are marked published on the broker's acknowledgement; on
/// start, events a previous run recorded but never saw acknowledged are published again with
/// their ids. Records are handled strictly in order, so a user's exit is always published before
/// their next enter. The connection carries the aggregator's retained status (online, and its
/// will: offline). On shutdown it finishes the records the loop handed it, unless the broker is
/// away: those stay recorded and are published after the next start.
final class Outbox: Service {
    private let configuration: AggregatorConfiguration
    private let client: MQTTClient
    private let logger: Logger
    private let records: AsyncStream<OutboundRecord>
    private let continuation: AsyncStream<OutboundRecord>.Continuation
    /// How long events waited from their decision to the broker's acknowledgement.
    let latency = LatencyRecorder()

    init(configuration: AggregatorConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        let topics = configuration.topics
        var mqtt = MQTTConfiguration(url: configuration.broker, clientID: configuration.effectiveClientID + "-out")
        mqtt.will = MQTTMessage(topic: topics.aggregatorStatus, payload: ServiceStatus(state: .offline).encoded(), qos: 1, retain: true)
        mqtt.birth = MQTTMessage(topic: topics.aggregatorStatus, payload: ServiceStatus(state: .online).encoded(), qos: 1, retain: true)
        client = try MQTTClient(configuration: mqtt, logger: logger)
        (records, continuation) = AsyncStream.makeStream(of: OutboundRecord.self, bufferingPolicy: .unbounded)
    }

    func submit(_ record: OutboundRecord) {
        continuation.yield(record)
    }

    /// No more records: `run` returns once the queued ones are done.
    func finish() {
        continuation.finish()
    }

    /// Publishes a QoS 0 message now, ahead of the records (the aggregator's counters).
    func publishNow(_ message: MQTTMessage) {
        do {
            try client.publishWithoutAcknowledgement(message)
        } catch {
            logger.debug("could not publish", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
        }
    }

    func run() async throws {
        try client.start()
        let database: PostgresConnection
        do {
            database = try await PostgresConnection.connectRetrying(configuration.database, purpose: "recording events", logger: logger)
        } catch is CancellationError {
            await client.stop(publishing: offlineStatus)
            return
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [client] in
                // Once shutting down, a broker that is away is not waited for.
                guard (try? await gracefulShutdown()) != nil else { return }
                while !Task.isCancelled, client.isConnected {
                    try? await Task.sleep(for: .milliseconds(200))
                }
                if !Task.isCancelled { await client.stop() }
            }
            await republishLeftovers(database)
            for await record in records {
                await handle(record, database)
            }
            group.cancelAll()
        }
        // The records end when the decision loop has finished; the group asks the outbox to stop
        // after the loop, and a service may not end before it is asked.
        try? await gracefulShutdown()
        await client.stop(publishing: offlineStatus)
        await database.close()
    }

    private var offlineStatus: MQTTMessage {
        MQTTMessage(topic: configuration.topics.aggregatorStatus, payload: ServiceStatus(state: .offline).encoded(), qos: 1, retain: true)
    }

    private func handle(_ record: OutboundRecord, _ database: PostgresConnection) async {
        switch record {
        case .decided(let decided):
            guard await self.record(decided.events, decided.notifications, database) else { return }
            var published: [String] = []
            for message in record.messages(configuration.topics) where await publish(message) {
                if let id = message.event {
                    published.append(id)
                    latency.record(milliseconds: WallClock.milliseconds() - decided.decidedAt)
                }
            }
            await markPublished(published, database)
        case .states:
            for message in record.messages(configuration.topics) { await publish(message) }
        case .progress(let progress):
            do {
                try await database.saveProgress(clientID: configuration.effectiveClientID, clock: progress.clock,
                                                lastSeen: progress.lastSeen.map { ($0.user, $0.time) })
            } catch {
                logger.warning("could not save progress", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Records events, retrying until the database takes them: nothing is published before.
    private func record(_ events: [PresenceEvent], _ notifications: [PresenceNotification], _ database: PostgresConnection) async -> Bool {
        var delay = 500
        while !Task.isCancelled {
            do {
                try await database.record(events, notifications: notifications, logger: logger)
                return true
            } catch {
                logger.error("could not record events; retrying", metadata: ["error": "\(error)", "events": "\(events.count)"])
                try? await Task.sleep(for: .milliseconds(delay))
                delay = min(delay * 2, 10_000)
                try? await database.ensureConnected()
            }
        }
        return false
    }

    private func republishLeftovers(_ database: PostgresConnection) async {
        do {
            let leftovers = try await database.unpublishedEvents()
            guard !leftovers.isEmpty else { return }
            logger.notice("publishing events recorded but not acknowledged before", metadata: ["events": "\(leftovers.count)"])
            var published: [String] = []
            for event in leftovers
            where await publish(OutboundMessage(topic: configuration.topics.event(beacon: event.beacon, user: event.user), payload: event.payload)) {
                published.append(event.id)
            }
            await markPublished(published, database)
        } catch {
            logger.error("could not read unpublished events", metadata: ["error": "\(error)"])
        }
    }

    /// Publishes with QoS 1 and waits for the acknowledgement; false when the client stopped first.
    @discardableResult
    private func publish(_ message: OutboundMessage) async -> Bool {
        do {
            try await client.publish(MQTTMessage(topic: message.topic, payload: message.payload, qos: 1, retain: message.retain))
            return true
        } catch {
            logger.warning("could not publish", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
            return false
        }
    }

    private func markPublished(_ ids: [String], _ database: PostgresConnection) async {
        do {
            try await database.markPublished(ids)
        } catch {
            logger.warning("could not mark events published; they will be published again after a restart",
                           metadata: ["error": "\(error)", "events": "\(ids.count)"])
        }
    }
}
