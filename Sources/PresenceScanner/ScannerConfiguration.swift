import PresenceCore
import PresenceMQTT

/// Everything `presence-scanner` needs to publish, built from flags and environment variables.
public struct ScannerConfiguration: Sendable {
    public var broker: MQTTBroker
    public var topics: Topics
    /// A batch closes when its oldest sighting has waited this long, ms (`--batch-ms`).
    public var batchInterval: Int64 = 500
    /// ... or when it holds this many sightings (`--batch-size`).
    public var batchSize = 1_000
    /// Batches kept while the broker does not acknowledge them; beyond, the oldest are dropped and counted.
    public var spoolCapacity = 10_000
    /// Where batches wait on disk too, so a restart does not lose them (`--spool-dir`); nil: memory only.
    public var spoolDirectory: String?
    /// How often each node publishes its stats (also its heartbeat), ms (`--stats-interval`).
    public var statsInterval: Int64 = 5_000
    /// Whether the nodes are worn by people (registered as devices `node:<key>`, `--carried`): with
    /// several shards, all a carried node hears goes on the shard of `node:<key>`, not split by what
    /// it heard.
    public var carried = false
    /// What the node reports as its software version.
    public var version = "0.1.0"

    public init(broker: MQTTBroker, topics: Topics) {
        self.broker = broker
        self.topics = topics
    }
}
