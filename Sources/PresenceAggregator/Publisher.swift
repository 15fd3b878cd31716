import Logging
import PresenceCore
import PresenceMQTT
import ServiceLifecycle
import Synchronization

/// Publishes the journal's records over its own connection to the broker (MQTT 5, so that each
/// acknowledgement carries a reason code), in the journal's order, with up to `publishWindow`
/// messages awaiting acknowledgement. A record counts as published once all its messages are
/// acknowledged; a message the broker refuses (reason 0x80 and above) is set aside in the dead
/// letters. While the broker is away, records wait in the journal (on disk) and go out in order
/// once it is back; after a restart, whatever was not acknowledged is published again, with the
/// same event ids. The connection also carries the aggregator's retained status (and its will,
/// offline), and keeps it up while others share the venue: when one of them stops or dies and its
/// will says offline, this one says its own status again. On shutdown it publishes everything the
/// loop decided, unless the broker is away.
final class Publisher: Service {
    private let configuration: AggregatorConfiguration
    private let journal: Journal
    private let health: AggregatorHealth
    private let deadLetters: DeadLetters
    private let logger: Logger
    private let client: MQTTClient
    private let metrics: AggregatorMetrics?
    /// How long events waited from their decision to the broker's acknowledgement.
    let latency = LatencyRecorder()
    /// Events the broker acknowledged, with the end of their record, for the database writer.
    private let acknowledged = Mutex<[(end: UInt64, id: String)]>([])

    init(configuration: AggregatorConfiguration, journal: Journal, health: AggregatorHealth, deadLetters: DeadLetters, metrics: AggregatorMetrics?,
         logger: Logger) throws {
        self.configuration = configuration
        self.metrics = metrics
        self.journal = journal
        self.health = health
        self.deadLetters = deadLetters
        self.logger = logger
        var mqtt = MQTTConfiguration(broker: configuration.broker, clientID: configuration.effectiveClientID + "-out")
        mqtt.will = Self.statusMessage(ServiceStatus(state: .offline), configuration.topics)
        mqtt.maxInFlight = configuration.publishWindow
        mqtt.subscriptions = [MQTTSubscription(configuration.topics.aggregatorStatus, qos: 1)]
        // Back soon after an outage: what waits in the journal is what subscribers wait for.
        mqtt.retry = configuration.retry
        client = try MQTTClient(configuration: mqtt, logger: logger)
    }

    /// Publishes a QoS 0 message now, ahead of the records (the aggregator's counters).
    func publishNow(_ message: MQTTMessage) {
        do {
            try client.publishWithoutAcknowledgement(message)
        } catch {
            logger.debug("could not publish", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
        }
    }

    /// The events the broker acknowledged since the last call, with the end of their record.
    func takeAcknowledged() -> [(end: UInt64, id: String)] {
        acknowledged.withLock { taken in
            defer { taken = [] }
            return taken
        }
    }

    /// Messages sent and not yet acknowledged.
    var inFlight: Int { client.statistics.inFlight }

    /// Whether the publishing connection is up.
    var isConnected: Bool { client.isConnected }

    func run() async throws {
        try client.start()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.publishStatusChanges() }
            group.addTask { await self.keepStatusUp() }
            await withTaskGroup(of: Void.self) { work in
                work.addTask { await self.publishJournal() }
                work.addTask { [client] in
                    // Once shutting down, a broker that is away is not waited for: what is not
                    // published stays in the journal for the next start.
                    guard (try? await gracefulShutdown()) != nil else { return }
                    while !Task.isCancelled, client.isConnected {
                        try? await Task.sleep(for: .milliseconds(200))
                    }
                }
                await work.next()
                work.cancelAll()
            }
            group.cancelAll()
        }
        try? await gracefulShutdown()
        await client.stop(publishing: Self.statusMessage(ServiceStatus(state: .offline), configuration.topics))
    }

    /// Sends every record of the journal, in order, until it ends (after the loop's last record)
    /// or the task is cancelled; then waits for the acknowledgements of what was sent.
    private func publishJournal() async {
        let journal = journal
        await journal.waitUntilOpen()
        let progress = PublishProgress(from: journal.cursor(of: .publisher)) { journal.consumed(.publisher, upTo: $0) }
        var cursor = progress.cursor
        sending: while !Task.isCancelled {
            let entries = await journal.records(from: cursor, limit: 500)
            guard !entries.isEmpty else { break }
            for entry in entries {
                guard case .decided(let decided) = entry.record else {
                    progress.begin(start: entry.start, end: entry.end, messages: 0)
                    cursor = entry.end
                    continue
                }
                // Decided while other aggregators shared the venue, a record goes out once the
                // database holds it: the one that takes this one's shards over resumes from the database.
                if decided.publishOnceStored, !(await journal.waitUntilApplied(entry.end)) { break sending }
                progress.begin(start: entry.start, end: entry.end, messages: decided.messages.count)
                let decidedAt = decided.decidedAt
                for message in decided.messages {
                    do {
                        try await client.send(MQTTMessage(topic: message.topic, payload: message.payload, qos: 1, retain: message.retain)) { result in
                            self.settle(result, message, entry: entry, decidedAt: decidedAt, progress: progress)
                        }
                    } catch {
                        logger.debug("stopped publishing", metadata: ["error": "\(error)"])
                        break sending
                    }
                }
                cursor = entry.end
            }
        }
        await withTaskCancellationHandler {
            await progress.drained()
        } onCancel: { [client] in
            Task { await client.stop() }
        }
    }

    private func settle(_ result: Result<Int32, MQTTError>, _ message: OutboundMessage, entry: Journal.Entry, decidedAt: Int64,
                        progress: PublishProgress) {
        switch result {
        case .success(let reason) where reason < 0x80:
            if let event = message.event {
                acknowledged.withLock { $0.append((entry.end, event.id)) }
                let waited = WallClock.milliseconds() - decidedAt
                latency.record(milliseconds: waited)
                metrics?.recordDecisionToPublish(milliseconds: waited)
            }
            progress.settled(start: entry.start)
        case .success(let reason):
            deadLetters.refusedByBroker(message, reason: reason)
            progress.settled(start: entry.start)
        case .failure:
            // The client stopped before the broker answered: the record stays unpublished in the
            // journal, and is published again after the next start.
            progress.abandoned(start: entry.start)
        }
    }

    /// Publishes the retained status whenever what the aggregator says of itself changes, and
    /// makes it the message every reconnect publishes.
    private func publishStatusChanges() async {
        var published: ServiceStatus?
        for await _ in health.changes {
            guard let status = health.status, status != published else { continue }
            published = status
            let message = Self.statusMessage(status, configuration.topics)
            do {
                try client.setBirth(message)
                try await client.send(message) { _ in }
            } catch {
                logger.debug("could not publish the status", metadata: ["error": "\(error)"])
            }
            logger.notice("status", metadata: ["state": "\(status.state.rawValue)"])
        }
    }

    /// Says this aggregator's status again whenever the retained one says offline while it runs:
    /// the will of another aggregator of the venue that died (or one that stopped) must not make
    /// subscribers (Home Assistant's availability among them) think nobody is deciding.
    private func keepStatusUp() async {
        for await message in client.messages where message.topic == configuration.topics.aggregatorStatus {
            guard ServiceStatus.state(of: message.payload) == .offline, let status = health.status, status.state != .offline else { continue }
            do {
                try await client.send(Self.statusMessage(status, configuration.topics)) { _ in }
                logger.notice("status said again over another aggregator's offline", metadata: ["state": "\(status.state.rawValue)"])
            } catch {
                logger.debug("could not publish the status", metadata: ["error": "\(error)"])
            }
        }
    }

    static func statusMessage(_ status: ServiceStatus, _ topics: Topics) -> MQTTMessage {
        MQTTMessage(topic: topics.aggregatorStatus, payload: status.encoded(), qos: 1, retain: true)
    }
}
