import Logging
import PresenceCore
import PresenceMQTT
import PresencePostgres
import PresenceStore

/// Makes events durable, then publishes them: each job's events are recorded in PostgreSQL (with
/// the session changes) before anything goes to the broker; events are marked published on the
/// broker's acknowledgement; on start, events a previous run recorded but never saw acknowledged
/// are published again with their ids. Jobs run strictly in order, so a user's exit is always
/// published before their next enter.
struct Outbox: Sendable {
    /// One unit of work, in the order the aggregator decided it.
    enum Job: Sendable {
        /// Record events (decided at `decidedAt`, ms) and the notifications they call for, publish
        /// both, then the retained states they change.
        case events([PresenceEvent], [PresenceNotification], PresenceBoard.Changes, decidedAt: Int64)
        /// Publish retained states that need no recording (start-up, registry changes).
        case states(PresenceBoard.Changes, deletedBeacons: [String])
        /// Save how far decisions have gone and the last-seen times of open sessions.
        case progress(clock: Int64, lastSeen: [(user: String, time: Int64)])
        /// Publish the aggregator's counters.
        case statistics([UInt8])
    }

    private let database: PostgresConnection
    private let mqtt: MQTTClient
    private let topics: Topics
    private let clientID: String
    private let logger: Logger
    /// How long events waited from their decision to the broker's acknowledgement.
    let latency = LatencyRecorder()
    private let jobs: AsyncStream<Job>
    private let continuation: AsyncStream<Job>.Continuation

    init(database: PostgresConnection, mqtt: MQTTClient, topics: Topics, clientID: String, logger: Logger) {
        self.database = database
        self.clientID = clientID
        self.mqtt = mqtt
        self.topics = topics
        self.logger = logger
        (jobs, continuation) = AsyncStream.makeStream(of: Job.self, bufferingPolicy: .unbounded)
    }

    func submit(_ job: Job) {
        continuation.yield(job)
    }

    /// No more jobs: `run` returns once the queued ones are done.
    func finish() {
        continuation.finish()
    }

    /// Publishes what earlier runs left unpublished, then runs jobs until `finish`.
    func run() async {
        await republishLeftovers()
        for await job in jobs {
            switch job {
            case .events(let events, let notifications, let changes, let decidedAt):
                guard await record(events, notifications) else { continue }
                var published: [String] = []
                for event in events {
                    if await publish(MQTTMessage(topic: topics.event(beacon: event.beacon, user: event.user), payload: event.encoded(), qos: 1)) {
                        published.append(event.id)
                        latency.record(milliseconds: WallClock.milliseconds() - decidedAt)
                    }
                }
                for notification in notifications {
                    await publish(MQTTMessage(topic: topics.notify(user: notification.user), payload: notification.encoded(), qos: 1))
                }
                await publishStates(changes, deletedBeacons: [])
                await markPublished(published)
            case .states(let changes, let deleted):
                await publishStates(changes, deletedBeacons: deleted)
            case .statistics(let payload):
                await publish(MQTTMessage(topic: topics.aggregatorStats, payload: payload, qos: 0))
            case .progress(let clock, let seen):
                do {
                    try await database.saveProgress(clientID: clientID, clock: clock, lastSeen: seen)
                } catch {
                    logger.warning("could not save progress", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Records events, retrying until the database takes them: nothing is published before. Only
    /// cancellation (a shutdown that cannot wait any longer) gives up, and says what it loses.
    private func record(_ events: [PresenceEvent], _ notifications: [PresenceNotification]) async -> Bool {
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
        logger.critical("shutting down with events the database never took", metadata: ["events": "\(events.count)"])
        return false
    }

    private func republishLeftovers() async {
        do {
            let leftovers = try await database.unpublishedEvents()
            guard !leftovers.isEmpty else { return }
            logger.notice("publishing events recorded but not acknowledged before", metadata: ["events": "\(leftovers.count)"])
            var published: [String] = []
            for event in leftovers where await publish(MQTTMessage(topic: topics.event(beacon: event.beacon, user: event.user), payload: event.payload, qos: 1)) {
                published.append(event.id)
            }
            await markPublished(published)
        } catch {
            logger.error("could not read unpublished events", metadata: ["error": "\(error)"])
        }
    }

    private func publishStates(_ changes: PresenceBoard.Changes, deletedBeacons: [String]) async {
        for state in changes.users {
            await publish(MQTTMessage(topic: topics.userState(state.user), payload: state.encoded(), qos: 1, retain: true))
        }
        for user in changes.clearedUsers {
            await publish(MQTTMessage(topic: topics.userState(user), payload: [], qos: 1, retain: true))
        }
        for state in changes.beacons {
            await publish(MQTTMessage(topic: topics.beaconState(state.beacon), payload: state.encoded(), qos: 1, retain: true))
        }
        for beacon in deletedBeacons {
            await publish(MQTTMessage(topic: topics.beaconState(beacon), payload: [], qos: 1, retain: true))
        }
    }

    /// Publishes and waits for the acknowledgement; false when the client stopped first.
    @discardableResult
    private func publish(_ message: MQTTMessage) async -> Bool {
        do {
            try await mqtt.publish(message)
            return true
        } catch {
            logger.warning("could not publish", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
            return false
        }
    }

    private func markPublished(_ ids: [String]) async {
        do {
            try await database.markPublished(ids)
        } catch {
            logger.warning("could not mark events published; they will be published again after a restart",
                           metadata: ["error": "\(error)", "events": "\(ids.count)"])
        }
    }
}
