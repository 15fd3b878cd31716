import PresenceCore
import PresenceMQTT
import PresencePostgres

/// Everything `presence-aggregator` needs to run, built from flags and environment variables.
public struct AggregatorConfiguration: Sendable {
    /// The broker to read sightings from and publish events to.
    public var broker: MQTTURL
    /// The database with the registry, sessions and events.
    public var database: PostgresConfiguration
    /// Topic names under the prefix (`--topic-prefix`).
    public var topics: Topics
    /// The engine's tuning, the watermark lag and the tick.
    public var pipeline = PresencePipeline.Configuration()
    /// The MQTT client id; one aggregator per id. Its broker session persists, so the broker keeps
    /// sightings for it while it is down; nil derives it from the topic prefix.
    public var clientID: String?
    /// Whether to start a new broker session each time, giving up what the broker kept.
    public var cleanSession = false
    /// After a start, the aggregator drains what the broker kept, deciding in the backlog's own
    /// time, until its clock is this close to now (plus the lateness) or no message has come for
    /// this long, ms; then it decides on the wall clock again.
    public var catchUpQuiet: Int64 = 500
    /// How often counters go to the log and to `{p}/v1/aggregator/stats`, ms.
    public var statsInterval: Int64 = 10_000
    /// How often the decided-up-to clock and the last-seen time of open sessions are saved, ms.
    public var progressInterval: Int64 = 1_000
    /// A user is greeted (or bid goodbye) at a beacon at most once per this long, ms.
    public var notificationCooldown: Int64 = 3_600_000
    /// How often the registry is reloaded even without a notification, ms.
    public var registryRefresh: Int64 = 60_000

    /// The client id in use: the configured one, or `presence-aggregator` plus the prefix.
    public var effectiveClientID: String {
        clientID ?? "presence-aggregator-" + topics.prefix.replacingSlashes()
    }

    public init(broker: MQTTURL, database: PostgresConfiguration, topics: Topics) {
        self.broker = broker
        var database = database
        // No call of the aggregator may wait on the database for ever.
        database.statementTimeout = database.statementTimeout ?? 30_000
        self.database = database
        self.topics = topics
    }
}

extension String {
    fileprivate func replacingSlashes() -> String {
        String(map { $0 == "/" ? "-" : $0 })
    }
}
