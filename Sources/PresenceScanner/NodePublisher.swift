import DequeModule
import Logging
import PresenceCore
import PresenceMQTT
import ServiceLifecycle
import Synchronization

/// Publishes one node's batches with QoS 1, in order, over the node's own connection, whose will
/// marks the node offline. It reads the venue's shard count retained on `{p}/v1/config` (1 until
/// it has) and splits each batch by device into its shards' parts (`Shards`), each on
/// `{p}/v1/sightings/{node}/{shard}`. Parts wait in a bounded spool until the broker acknowledges
/// them; when the spool is full the oldest are dropped and counted, never silently.
public final class NodePublisher: Sendable {
    public let node: String
    private let client: MQTTClient
    private let topics: Topics
    private let carried: Bool
    private let logger: Logger
    private let capacity: Int
    private let state = Mutex(SpoolState())
    /// The venue's shard count, as last read on `{p}/v1/config`.
    private let shards: ShardCount
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let onlineStatus: ServiceStatus
    /// The node's retained status once it stops, and its will.
    private let offline: MQTTMessage

    struct SpoolState {
        /// Batches (or their shards' parts) waiting for the broker, as published (a restart re-sends
        /// spooled ones as they were).
        var queue = Deque<SpooledBatch>()
        var file: SpoolFile?
        var dropped = 0
        var published = 0
        var finished = false
    }

    /// Counters for the node's stats.
    public struct Counters: Sendable, Equatable {
        public var published: Int
        public var dropped: Int
        public var spooled: Int
    }

    /// A publisher for `node`; with a spool directory, batches a previous run left unacknowledged
    /// are sent first.
    public init(node: String, configuration: ScannerConfiguration, adapter: String, started: Int64, logger: Logger) throws {
        self.node = node
        topics = configuration.topics
        carried = configuration.carried
        capacity = configuration.spoolCapacity
        var logger = logger
        logger[metadataKey: "node"] = "\(node)"
        self.logger = logger
        onlineStatus = ServiceStatus(state: .online, details: [("node", node), ("version", configuration.version), ("adapter", adapter)],
                                     numbers: [("started", started)])
        var mqtt = MQTTConfiguration(broker: configuration.broker, clientID: "presence-scanner-\(node)")
        // A node wants its broker back soon after an outage, not after a 30 s back-off.
        mqtt.retry = RetryPolicy(first: .seconds(1), longest: .seconds(5))
        offline = MQTTMessage(topic: topics.nodeStatus(node: node), payload: ServiceStatus(state: .offline, details: [("node", node)]).encoded(),
                              qos: 1, retain: true)
        mqtt.will = offline
        mqtt.birth = MQTTMessage(topic: topics.nodeStatus(node: node), payload: onlineStatus.encoded(), qos: 1, retain: true)
        mqtt.subscriptions = [MQTTSubscription(topics.config, qos: 1)]
        let shards = ShardCount()
        self.shards = shards
        mqtt.onMessage = { [logger] message in
            guard let config = VenueConfig(payload: message.payload), shards.replace(with: config.shards) else { return }
            logger.notice("the venue's shard count", metadata: ["shards": "\(config.shards.count)"])
        }
        client = try MQTTClient(configuration: mqtt, logger: logger)
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        if let directory = configuration.spoolDirectory {
            let file = try SpoolFile(directory: directory, node: node)
            let left = file.pending().compactMap(SpooledBatch.init(line:))
            if !left.isEmpty {
                logger.notice("sending batches a previous run left unacknowledged", metadata: ["batches": "\(left.count)"])
            }
            state.withLock { state in
                state.file = file
                state.queue.append(contentsOf: left)
            }
        }
    }

    public func start() throws {
        try client.start()
    }

    /// Queues a batch for publishing, in its shards' parts.
    public func submit(_ batch: SightingBatch) {
        let shards = shards.current
        let parts = shards.parts(of: batch, carriedBy: carried ? node : nil).map { part in
            SpooledBatch(shard: shards.count == 1 ? nil : part.shard, payload: part.batch.encoded())
        }
        let dropped = state.withLock { state -> Bool in
            var dropped = false
            for part in parts {
                state.queue.append(part)
                state.file?.append(part.line)
                guard state.queue.count > capacity else { continue }
                state.queue.removeFirst()
                state.file?.markDone(1)
                state.dropped += 1
                dropped = true
            }
            return dropped
        }
        if dropped {
            logger.warning("spool full: dropped the oldest batch", metadata: ["capacity": "\(capacity)"])
        }
        wake.yield()
    }

    public var counters: Counters {
        state.withLock { Counters(published: $0.published, dropped: $0.dropped, spooled: $0.queue.count) }
    }

    /// Publishes queued batches in order until `finish` and an empty spool. Once the service is
    /// shutting down, a broker that is away is not waited for: the connection stops and what is
    /// left stays in the spool (on disk with a spool directory, for the next run).
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [client, offline] in
                guard (try? await gracefulShutdown()) != nil else { return }
                while !Task.isCancelled, client.isConnected {
                    try? await Task.sleep(for: .milliseconds(200))
                }
                if !Task.isCancelled { await client.stop(publishing: offline) }
            }
            await publishSpooled()
            group.cancelAll()
        }
    }

    private func publishSpooled() async {
        var iterator = wakeups.makeAsyncIterator()
        while true {
            let next = state.withLock { state -> (batch: SpooledBatch?, generation: Int, finished: Bool) in
                (state.queue.first, state.dropped, state.finished)
            }
            guard let batch = next.batch else {
                if next.finished { return }
                guard await iterator.next() != nil else { return }
                continue
            }
            do {
                let topic = batch.shard.map { topics.sightings(node: node, shard: $0) } ?? topics.sightings(node: node)
                try await client.publish(MQTTMessage(topic: topic, payload: batch.payload, qos: 1))
                state.withLock { state in
                    // Unless the spool overflowed meanwhile (and dropped this very batch), it is first.
                    if state.dropped == next.generation, !state.queue.isEmpty {
                        state.queue.removeFirst()
                        state.file?.markDone(1)
                    }
                    state.published += 1
                }
            } catch {
                logger.warning("could not publish a batch; it stays spooled", metadata: ["error": "\(error)"])
                return
            }
        }
    }

    /// `stats` with the spool's counters: batches published, dropped (added to those `stats`
    /// counts already) and waiting.
    public func counted(_ stats: NodeStatistics) -> NodeStatistics {
        let counters = counters
        var stats = stats
        stats.published = counters.published
        stats.dropped += counters.dropped
        stats.spooled = counters.spooled
        return stats
    }

    /// Publishes the node's counters on `{p}/v1/nodes/{node}/stats` (QoS 0): also the node's
    /// heartbeat, by which the aggregator tells a silent node from a dead one.
    public func publishStats(_ stats: NodeStatistics) {
        do {
            try client.publishWithoutAcknowledgement(MQTTMessage(topic: topics.nodeStats(node: node), payload: counted(stats).encoded(), qos: 0))
        } catch {
            logger.debug("could not publish stats", metadata: ["error": "\(error)"])
        }
    }

    /// No more batches: `run` returns once the spool is empty.
    public func finish() {
        state.withLock { $0.finished = true }
        wake.finish()
    }

    /// Publishes the offline status and disconnects; batches not acknowledged by then stay in the spool.
    /// With the broker away this still takes about 5 s: the client waits that long for the
    /// offline status, which a broker back in time gets (else it keeps the will's).
    public func stop() async {
        await client.stop(publishing: offline)
        let left = state.withLock { state -> Int in
            state.file?.close()
            return state.queue.count
        }
        if left > 0 {
            logger.warning("stopping with batches the broker did not acknowledge", metadata: ["batches": "\(left)", "kept_on_disk": "\(state.withLock { $0.file != nil })"])
        }
    }
}

/// A batch (or one shard's part of it) waiting for the broker: its shard (nil: unsharded, on
/// `{p}/v1/sightings/{node}`) and its payload. A spool line is the payload, behind the shard and a
/// space when it has one (a spool of a scanner before sharding reads as unsharded batches).
struct SpooledBatch: Sendable, Equatable {
    var shard: Int?
    var payload: [UInt8]

    var line: [UInt8] {
        guard let shard else { return payload }
        return Array("\(shard) ".utf8) + payload
    }

    init(shard: Int?, payload: [UInt8]) {
        self.shard = shard
        self.payload = payload
    }

    /// The batch a spool line holds; nil for a line that holds none.
    init?(line: [UInt8]) {
        guard let first = line.first else { return nil }
        if first == UInt8(ascii: "{") {
            self.init(shard: nil, payload: line)
            return
        }
        guard let space = line.firstIndex(of: UInt8(ascii: " ")), space > 0, space <= 4,
              line[..<space].allSatisfy({ (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains($0) }),
              let shard = Int(String(decoding: line[..<space], as: UTF8.self)), shard < Shards.maximum else { return nil }
        self.init(shard: shard, payload: Array(line[(space + 1)...]))
    }
}

/// The venue's shard count as a node last read it, shared with the connection's thread.
final class ShardCount: Sendable {
    private let shards = Mutex(Shards.one)

    var current: Shards { shards.withLock { $0 } }

    /// Takes `new`; true when it changed the count.
    func replace(with new: Shards) -> Bool {
        shards.withLock { shards in
            defer { shards = new }
            return shards != new
        }
    }
}
