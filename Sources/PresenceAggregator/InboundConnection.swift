import Logging
import PresenceCore
import PresenceMQTT
import ServiceLifecycle
import Synchronization

/// The connections that receive what the decision loop decides from, straight into its inbox: one
/// for the nodes' status and stats (libmosquitto), one for the foreign nodes' reports (every
/// aggregator hears every node), and one per shard this aggregator owns for that shard's
/// sightings, in a broker session named after the shard (`AggregatorConfiguration.shardClientID`),
/// persistent, so that the broker keeps a shard's sightings while nobody owns it (a restart, a
/// takeover) for whoever takes it next. The foreign nodes' and the shards' are read through
/// swift-nio (`MQTTInboundConnection`), plain TCP or TLS. They connect
/// once the loop is ready and say when the first subscriptions are in place (only then does the
/// aggregator call itself online), follow the shards `ShardOwnership` hands out, tell the loop when
/// the way in goes down (a shard's session that was subscribed lost its connection: the broker, a
/// hall's bridge queue and the nodes' spools keep what comes meanwhile) and when it is back (every
/// such session subscribed again), and are the first part to stop on shutdown, so that the loop can
/// decide everything received before it ends.
final class InboundConnection: Service {
    private let configuration: AggregatorConfiguration
    private let client: MQTTClient
    /// The foreign nodes' subscriptions, read through swift-nio (plain TCP or TLS).
    private let foreign: MQTTInboundConnection?
    private let inbox: LoopInbox
    private let ready: StartGate
    private let health: AggregatorHealth
    private let logger: Logger
    private let drops: InboundDrops
    private let shards = Mutex<(wanted: ShardSet, running: Bool, sessions: [Int: ShardSession], down: Set<Int>)>((.empty, false, [:], []))
    private let following = Mutex(false)

    init(configuration: AggregatorConfiguration, inbox: LoopInbox, ready: StartGate, health: AggregatorHealth, logger: Logger) throws {
        let topics = configuration.topics
        let drops = InboundDrops(logger: logger)
        var mqtt = Self.session(configuration, clientID: configuration.effectiveClientID, inbox: inbox, drops: drops)
        mqtt.subscriptions = [MQTTSubscription(topics.allNodeStatuses, qos: 1), MQTTSubscription(topics.allNodeStats, qos: 0)]
        // Foreign nodes publish at QoS 0, a message per sighting, and cannot split their reports by
        // shard: every aggregator hears them all and decides for its own shards' users. swift-nio
        // reads them, over plain TCP or TLS alike: a few system calls per read instead of several
        // per message, and each read's messages handed to the inbox as one item.
        let filters = configuration.core.foreign.subscriptions
        if filters.isEmpty {
            foreign = nil
        } else {
            var connection = MQTTInboundConnection.Configuration(broker: configuration.broker, clientID: configuration.effectiveClientID + "-foreign",
                                                                 subscriptions: filters.map { MQTTSubscription($0, qos: 0) })
            connection.retry = configuration.retry
            foreign = try MQTTInboundConnection(configuration: connection, logger: logger) { messages in
                guard let dropped = inbox.push(messages, receivedAt: WallClock.milliseconds()) else { return }
                drops.dropped(total: dropped)
            }
        }
        client = try MQTTClient(configuration: mqtt, logger: logger)
        self.configuration = configuration
        self.inbox = inbox
        self.ready = ready
        self.health = health
        self.logger = logger
        self.drops = drops
    }

    /// While other aggregators share the venue, hears the users' retained states (theirs tell where
    /// the users of other shards are, for the beacons' states), the aggregators' parts of the
    /// fleet's health and (for the page's feed) their events; alone, does not (every state and
    /// event would be its own, coming back).
    func followOthers(_ shared: Bool) {
        let changed = following.withLock { following in
            defer { following = shared }
            return following != shared
        }
        guard changed else { return }
        do {
            if shared {
                try client.subscribe(MQTTSubscription(configuration.topics.allUserStates, qos: 1))
                try client.subscribe(MQTTSubscription(configuration.topics.allHealthParts, qos: 0))
                if configuration.http != nil { try client.subscribe(MQTTSubscription(configuration.topics.allEvents, qos: 1)) }
            } else {
                for filter in followed { try client.unsubscribe(filter) }
            }
        } catch {
            logger.warning("cannot follow the other aggregators' states, health parts and events", metadata: ["error": "\(error)"])
        }
    }

    /// What `followOthers` subscribes to.
    private var followed: [String] {
        [configuration.topics.allUserStates, configuration.topics.allHealthParts, configuration.topics.allEvents]
    }

    /// Whether the connections are up, with every subscription of the foreign nodes' granted.
    var isConnected: Bool {
        problem == nil
    }

    /// Why the connections are not all up, in a line (nil: they are): a refused subscription names
    /// its filter and the broker's answer.
    var problem: String? {
        if let problem = foreign?.status.problem { return "foreign nodes' connection: \(problem)" }
        guard client.isConnected else { return "not connected to the broker" }
        let shardsDown = shards.withLock { $0.sessions.filter { !$0.value.connection.isSubscribed }.keys.sorted() }
        return shardsDown.isEmpty ? nil : "shard sessions not subscribed: \(shardsDown.map(String.init).joined(separator: ", "))"
    }

    /// From now on, receives the sightings of `owned` (and no other shard's): a shard given back
    /// has its session closed first (the broker keeps what comes next for the next owner), a
    /// shard taken has its session opened, with what the broker kept.
    func receive(_ owned: ShardSet) async {
        let (stopping, starting, back) = shards.withLock { state -> ([ShardSession], [Int], Bool) in
            state.wanted = owned
            guard state.running else { return ([], [], false) }
            let stopping = state.sessions.filter { !owned.contains($0.key) }
            let wasDown = !state.down.isEmpty
            for shard in stopping.keys {
                state.sessions[shard] = nil
                state.down.remove(shard)
            }
            return (Array(stopping.values), owned.sorted.filter { state.sessions[$0] == nil }, wasDown && state.down.isEmpty)
        }
        // A shard given back while its session was down no longer holds the way in down.
        if back { inbox.inbound(up: true, at: WallClock.milliseconds()) }
        for session in stopping { await session.stop() }
        for shard in starting { startShard(shard) }
    }

    func run() async throws {
        defer { inbox.finish() }
        await withTaskCancellationOrGracefulShutdownHandler { [ready] in
            await ready.wait()
        } onCancelOrGracefulShutdown: { [ready] in
            ready.open()
        }
        guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
        try client.start()
        try await withThrowingDiscardingTaskGroup { group in
            if let foreign { group.addTask { try await foreign.run() } }
            await receiveUntilShutdown()
        }
        await client.stop()
    }

    /// Opens the shards' sessions, says when the first subscriptions are in place, and closes the
    /// sessions on shutdown (the foreign nodes' connection ends on the same shutdown).
    private func receiveUntilShutdown() async {
        let first = shards.withLock { state -> [Int] in
            state.running = true
            return state.wanted.sorted
        }
        for shard in first { startShard(shard) }
        do {
            let opened = shards.withLock { Array($0.sessions.values) }
            try await cancelWhenGracefulShutdown { [client] in
                try await client.waitUntilConnected()
                for session in opened { await session.connection.waitUntilConnected() }
                try Task.checkCancellation()
            }
            // An aggregator before shard sessions received every shard's sightings in this session,
            // which keeps its subscriptions: they go, or every batch would come twice.
            // (And the users' states a run sharing the venue followed, unless this one does.)
            var legacy = [configuration.topics.allSightings, configuration.topics.allShardedSightings]
            if !following.withLock({ $0 }) { legacy += followed }
            for filter in legacy { try client.unsubscribe(filter) }
            health.subscribed()
        } catch {
            logger.debug("stopped before the subscriptions were in place", metadata: ["error": "\(error)"])
        }
        try? await gracefulShutdown()
        let open = shards.withLock { state -> [ShardSession] in
            state.running = false
            defer { state.sessions = [:] }
            return Array(state.sessions.values)
        }
        for session in open { await session.stop() }
    }

    /// A shard's broker session, read through swift-nio, and the task that runs it.
    private struct ShardSession: Sendable {
        let connection: MQTTInboundConnection
        let task: Task<Void, Never>

        /// Says DISCONNECT (the broker keeps the session) and returns once closed.
        func stop() async {
            task.cancel()
            await task.value
        }
    }

    /// Opens shard `shard`'s session: MQTT 3.1.1, persistent unless `--clean-session`, its
    /// sightings at QoS 1, each read's batches handed to the inbox together and acknowledged after.
    private func startShard(_ shard: Int) {
        let topics = configuration.topics
        var subscriptions = [MQTTSubscription(topics.shardSightings(shard), qos: 1)]
        // Batches not split (one shard, or a node that has not read the count yet) come with shard 0.
        if shard == 0 { subscriptions.append(MQTTSubscription(topics.allSightings, qos: 1)) }
        var session = MQTTInboundConnection.Configuration(broker: configuration.broker, clientID: configuration.shardClientID(shard),
                                                          subscriptions: subscriptions)
        session.cleanSession = configuration.cleanSession
        session.retry = configuration.retry
        do {
            let connection = try MQTTInboundConnection(configuration: session, logger: logger, onConnected: { [weak self] connected in
                self?.shardSession(shard, connected: connected)
            }) { [inbox, drops] messages in
                guard let dropped = inbox.push(messages, receivedAt: WallClock.milliseconds()) else { return }
                drops.dropped(total: dropped)
            }
            let task = Task<Void, Never> { _ = try? await connection.run() }
            shards.withLock { $0.sessions[shard] = ShardSession(connection: connection, task: task) }
        } catch {
            logger.error("cannot open the broker session of a shard; its sightings wait at the broker", metadata: [
                "shard": "\(shard)", "error": "\(error)",
            ])
        }
    }

    /// Shard `shard`'s session is subscribed (`connected`) or lost its connection: the loop hears
    /// when the way in goes down (the first shard's session lost) and when it is back (the last
    /// one subscribed again), in order with the messages the sessions delivered.
    private func shardSession(_ shard: Int, connected: Bool) {
        let (wasDown, isDown) = shards.withLock { state -> (Bool, Bool) in
            let wasDown = !state.down.isEmpty
            if connected {
                state.down.remove(shard)
            } else if state.sessions[shard] != nil {
                state.down.insert(shard)
            }
            return (wasDown, !state.down.isEmpty)
        }
        guard wasDown != isDown else { return }
        inbox.inbound(up: !isDown, at: WallClock.milliseconds())
    }

    /// A persistent session (unless `--clean-session`) whose messages go to the inbox.
    private static func session(_ configuration: AggregatorConfiguration, clientID: String, inbox: LoopInbox, drops: InboundDrops) -> MQTTConfiguration {
        var mqtt = MQTTConfiguration(broker: configuration.broker, clientID: clientID)
        mqtt.cleanSession = configuration.cleanSession
        // A persistent session needs, under MQTT 5, a session-expiry CONNECT property, which
        // libmosquitto's automatic reconnects do not send; under 3.1.1 the broker keeps a session
        // without clean-session for as long as it is configured to.
        if !configuration.cleanSession { mqtt.protocolVersion = .v311 }
        mqtt.onMessage = { message in
            guard let dropped = inbox.push(message, receivedAt: WallClock.milliseconds()) else { return }
            drops.dropped(total: dropped)
        }
        mqtt.retry = configuration.retry
        return mqtt
    }
}
