import PresenceCore
import PresenceHTTP
import PresenceMQTT
import PresencePostgres
import PresenceStore

import class Foundation.ProcessInfo

/// Everything `presence-aggregator` needs to run, built from flags and environment variables.
public struct AggregatorConfiguration: Sendable {
    /// The broker to read sightings from and publish events to.
    public var broker: MQTTBroker
    /// The database with the registry, sessions and events.
    public var database: PostgresConfiguration
    /// The decisions and what follows from them: the engine's tuning, the topics (`--topic-prefix`),
    /// Home Assistant's discovery (`--ha-discovery`), the watermark, catching up, progress and stats
    /// intervals.
    public var core = AggregatorCore.Configuration()
    /// Topic names under the prefix.
    public var topics: Topics {
        get { core.topics }
        set { core.topics = newValue }
    }
    /// The MQTT client id; one aggregator per id. Its broker session persists, so the broker keeps
    /// sightings for it while it is down; nil derives it from the topic prefix. The publishing
    /// connection uses this id with `-out` appended.
    public var clientID: String?
    /// Whether to start a new broker session each time, giving up what the broker kept.
    public var cleanSession = false
    /// How often the registry is reloaded even without a notification, ms.
    public var registryRefresh: Int64 = 60_000
    /// Bytes of received messages waiting for the decision loop; beyond, messages are dropped and
    /// counted.
    public var inboundBytes = 64 << 20
    /// The waits between attempts of every connection the aggregator keeps: its inbound and
    /// publishing broker connections and its database connections and listeners. 1 s doubling to
    /// 5 s: what waits in the journal and at the broker is what subscribers wait for.
    public var retry = RetryPolicy(first: .seconds(1), longest: .seconds(5))
    /// How many published messages may wait for the broker's acknowledgement at once.
    public var publishWindow = 1_000
    /// Where the journal and the dead letters live; one aggregator (client id) per folder.
    public var stateDirectory: String
    /// Past this many bytes held in the journal (a long database outage), progress is saved once a
    /// minute instead of every second; events are always kept.
    public var journalBytes: UInt64 = 1 << 30
    /// The memory the journal may hold in records a reader has yet to pass (more are read back
    /// from its files).
    public var journalCacheBytes: UInt64 = 32 << 20
    /// Whether log lines may name users (`--log-identities`, for debugging); otherwise they carry
    /// counts only. Debug lines may name topics, which hold user keys.
    public var logIdentities = false
    /// Where the HTTP face (page, API, metrics, probes) listens; nil: none.
    public var http: ListenAddress?
    /// How long history is kept; purged at start and every hour.
    public var retention = Retention(sessions: 180 * 86_400_000, events: 30 * 86_400_000)

    /// The client id in use: the configured one, or `presence-aggregator` plus the prefix.
    public var effectiveClientID: String {
        clientID ?? "presence-aggregator-" + topics.prefix.replacingSlashes()
    }

    /// The client id as one topic level (`/`, `+` and `#` made `-`): its part of the fleet's health
    /// goes out on `{p}/v1/health/parts/{topicName}`.
    public var topicName: String {
        String(effectiveClientID.map { "/+#".contains($0) ? "-" : $0 })
    }

    /// The broker session that receives shard `shard`'s sightings, the same for every aggregator of
    /// the venue: whoever owns the shard takes it over, with what the broker kept meanwhile.
    public func shardClientID(_ shard: Int) -> String {
        "presence-aggregator-" + topics.prefix.replacingSlashes() + "-shard-\(shard)"
    }

    public init(broker: MQTTBroker, database: PostgresConfiguration, topics: Topics) {
        self.broker = broker
        var database = database
        // No call of the aggregator may wait on the database for ever.
        database.statementTimeout = database.statementTimeout ?? 30_000
        self.database = database
        stateDirectory = ""
        self.topics = topics
        stateDirectory = Self.defaultStateDirectory(clientID: effectiveClientID)
    }

    /// `$STATE_DIRECTORY` (set by systemd's `StateDirectory=`), else `$XDG_STATE_HOME/presence`
    /// (`~/.local/state/presence`), with the client id below it.
    public static func defaultStateDirectory(clientID: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let base = environment["STATE_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) }
            ?? (environment["XDG_STATE_HOME"] ?? (environment["HOME"] ?? "/tmp") + "/.local/state") + "/presence"
        return base + "/" + clientID
    }
}

extension String {
    fileprivate func replacingSlashes() -> String {
        String(map { $0 == "/" ? "-" : $0 })
    }
}
