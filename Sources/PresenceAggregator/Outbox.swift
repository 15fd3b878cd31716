import Logging
import PresenceCore
import PresenceMQTT
import PresencePostgres
import PresenceStore
import ServiceLifecycle

/// Makes events durable, then publishes them, over its own database and broker connections.
/// It takes the records waiting (up to 2,000) as one batch: their events are recorded in
/// PostgreSQL with the session changes, notifications and progress in one pipelined transaction,
/// before anything goes to the broker; then every message of the batch is published in order
/// through a window of `publishWindow` unacknowledged messages, and the events the broker accepted
/// are marked published. On start, events a previous run recorded but never saw acknowledged are
/// published again with their ids. Messages leave in the order decided, so a user's exit is always
/// published before their next enter. The connection carries the aggregator's retained status (online, and its
/// will: offline). On shutdown it finishes the records the loop handed it, unless the broker is
/// away: those stay recorded and are published after the next start.
final class Outbox: Service {
    private let configuration: AggregatorConfiguration
    private let client: MQTTClient
    private let logger: Logger
    private let records = WorkQueue<OutboundRecord>()
    /// Opens once the inbound subscriptions are in place: only then does the aggregator say it is online.
    private let subscribed: StartGate
    /// How long events waited from their decision to the broker's acknowledgement.
    let latency = LatencyRecorder()

    init(configuration: AggregatorConfiguration, subscribed: StartGate, logger: Logger) throws {
        self.configuration = configuration
        self.subscribed = subscribed
        self.logger = logger
        let topics = configuration.topics
        var mqtt = MQTTConfiguration(url: configuration.broker, clientID: configuration.effectiveClientID + "-out")
        mqtt.will = MQTTMessage(topic: topics.aggregatorStatus, payload: ServiceStatus(state: .offline).encoded(), qos: 1, retain: true)
        mqtt.birth = MQTTMessage(topic: topics.aggregatorStatus, payload: ServiceStatus(state: .online).encoded(), qos: 1, retain: true)
        mqtt.maxInFlight = configuration.publishWindow
        client = try MQTTClient(configuration: mqtt, logger: logger)
    }

    func submit(_ record: OutboundRecord) {
        records.append(record)
    }

    /// No more records: `run` returns once the queued ones are done.
    func finish() {
        records.finish()
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
        await withTaskCancellationOrGracefulShutdownHandler { [subscribed] in
            await subscribed.wait()
        } onCancelOrGracefulShutdown: { [subscribed] in
            subscribed.open()
        }
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
            var acknowledged: [String] = []
            while await records.wait() {
                acknowledged = await handle(records.take(upTo: 2_000), marking: acknowledged, database)
                // Marked with the next batch, or now when none is waiting.
                if records.isEmpty, !acknowledged.isEmpty, await store(marking(acknowledged), database) { acknowledged = [] }
            }
            if !acknowledged.isEmpty { _ = await store(marking(acknowledged), database) }
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

    /// Stores a batch of records (with the acknowledgements gathered before), then publishes its
    /// messages through the window; returns the events the broker accepted, to mark next.
    private func handle(_ batch: [OutboundRecord], marking acknowledged: [String], _ database: PostgresConnection) async -> [String] {
        var store = marking(acknowledged)
        var lastSeen: [String: Int64] = [:]
        var decidedAt: [String: Int64] = [:]
        for record in batch {
            switch record {
            case .decided(let decided):
                store.events += decided.events
                store.notifications += decided.notifications
                for event in decided.events { decidedAt[event.id] = decided.decidedAt }
            case .progress(let progress):
                store.clock = (configuration.effectiveClientID, progress.clock)
                for seen in progress.lastSeen { lastSeen[seen.user] = max(lastSeen[seen.user] ?? .min, seen.time) }
            case .states:
                break
            }
        }
        store.lastSeen = lastSeen.map { OutboundRecord.LastSeen(user: $0.key, time: $0.value) }.sorted { $0.user < $1.user }
        guard await self.store(store, database) else { return [] }
        let outcome = await publish(batch.flatMap { $0.messages(configuration.topics) })
        let now = WallClock.milliseconds()
        for id in outcome.accepted {
            if let decided = decidedAt[id] { latency.record(milliseconds: now - decided) }
        }
        return outcome.accepted
    }

    /// A batch that only marks `acknowledged` events published.
    private func marking(_ acknowledged: [String]) -> StoreBatch {
        var batch = StoreBatch()
        batch.published = acknowledged
        return batch
    }

    /// Stores a batch, retrying until the database takes it: nothing is published before. Only a
    /// shutdown with the database away gives up (the records are lost then, and said so).
    private func store(_ batch: StoreBatch, _ database: PostgresConnection) async -> Bool {
        var delay = 500
        while true {
            do {
                let report = try await database.store(batch)
                for user in report.staleSessionsClosed.prefix(3) {
                    logger.warning("closed a session the engine did not know about", metadata: ["user": "\(user)"])
                }
                for subject in report.exitsWithoutSession.prefix(3) {
                    logger.warning("an exit found no open session", metadata: ["session": "\(subject)"])
                }
                return true
            } catch {
                logger.error("could not store events; retrying", metadata: ["error": "\(error)", "events": "\(batch.events.count)"])
                if Task.isShuttingDownGracefully, (try? await database.ensureConnected()) == nil {
                    logger.critical("shutting down with events the database never took", metadata: ["events": "\(batch.events.count)"])
                    return false
                }
                try? await Task.sleep(for: .milliseconds(delay))
                delay = min(delay * 2, 10_000)
                try? await database.ensureConnected()
            }
        }
    }

    /// Publishes `messages` in order through the window, then waits for every acknowledgement (or
    /// for the client to stop).
    private func publish(_ messages: [OutboundMessage]) async -> (accepted: [String], refused: [(topic: String, reason: Int32)]) {
        let acknowledgements = Acknowledgements()
        for message in messages {
            acknowledgements.expect()
            do {
                try await client.send(MQTTMessage(topic: message.topic, payload: message.payload, qos: 1, retain: message.retain)) { result in
                    acknowledgements.received(result, topic: message.topic, event: message.event)
                }
            } catch {
                acknowledgements.received(Result<Int32, any Error>.failure(error), topic: message.topic, event: nil)
                logger.warning("could not publish", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
                break
            }
        }
        let outcome = await acknowledgements.all()
        for refusal in outcome.refused.prefix(3) {
            logger.warning("the broker refused a message", metadata: ["topic": "\(refusal.topic)", "reason": "\(refusal.reason)"])
        }
        return outcome
    }

    private func republishLeftovers(_ database: PostgresConnection) async {
        do {
            let leftovers = try await database.unpublishedEvents()
            guard !leftovers.isEmpty else { return }
            logger.notice("publishing events recorded but not acknowledged before", metadata: ["events": "\(leftovers.count)"])
            let outcome = await publish(leftovers.map { event in
                OutboundMessage(topic: configuration.topics.event(beacon: event.beacon, user: event.user), payload: event.payload, event: event.id)
            })
            _ = await store(marking(outcome.accepted), database)
        } catch {
            logger.error("could not read unpublished events", metadata: ["error": "\(error)"])
        }
    }
}
