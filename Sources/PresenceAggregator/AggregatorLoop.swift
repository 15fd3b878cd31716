import Logging
import PresenceCore
import PresenceMQTT
import PresencePostgres
import PresenceStore

/// The aggregator's main loop state: the pipeline, the live board, and the timers for saving
/// last-seen times, reloading the registry and reporting counters. One task owns it.
struct AggregatorLoop {
    let configuration: AggregatorConfiguration
    let logger: Logger
    var pipeline: PresencePipeline
    var board = PresenceBoard()
    var notifications = NotificationPolicy()
    var outbox: Outbox?
    /// The MQTT client's counters and the loop queue's drops, for the stats.
    var inbound: @Sendable () -> (MQTTStatistics, Int) = { (MQTTStatistics(), 0) }
    private var rateLimited = RateLimitedLog()
    private var registryDirty = false
    private var lastRegistryLoad: Int64
    private var lastSeenSaved: [String: Int64] = [:]
    private var progressSavedAt: Int64
    private var statsAt: Int64
    /// Draining what the broker kept during a downtime: ticks do not move the clock yet.
    private var catchingUp = true
    private let startedAt: Int64
    private var lastMessageAt: Int64

    init(configuration: AggregatorConfiguration, registry: Registry, start: Int64, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        pipeline = PresencePipeline(configuration: configuration.pipeline, registry: registry, start: start)
        let now = WallClock.milliseconds()
        lastRegistryLoad = now
        progressSavedAt = now
        statsAt = now
        startedAt = now
        lastMessageAt = now
    }

    mutating func handle(_ input: AggregatorService.Input, database: PostgresConnection) async {
        switch input {
        case .message(let message, let receivedAt):
            let topics = configuration.topics
            let outcome: PresencePipeline.Outcome
            if let node = topics.nodeOfStatus(message.topic) {
                guard let state = ServiceStatus.state(of: message.payload) else {
                    rateLimited.warning(logger, key: "status-unreadable", at: receivedAt, "ignored a node status without a state")
                    return
                }
                outcome = pipeline.receiveStatus(node: Substring(node), online: state == .online, at: receivedAt)
                if outcome.refusal == nil {
                    rateLimited.notice(logger, key: "status-\(node)", at: receivedAt, "node status",
                                       metadata: ["node": "\(node)", "state": "\(state.rawValue)"])
                }
            } else if let node = topics.nodeOfStats(message.topic) {
                outcome = pipeline.receiveStats(node: Substring(node), at: receivedAt)
            } else if let node = topics.nodeOfSightings(message.topic) {
                lastMessageAt = receivedAt
                outcome = pipeline.receive(message.payload, node: Substring(node), at: receivedAt, catchingUp: catchingUp)
                if outcome.refusal == nil, outcome.droppedSightings > 0 {
                    rateLimited.warning(logger, key: "sightings", at: receivedAt, "dropped invalid sightings from a batch",
                                        metadata: ["node": "\(node)", "dropped": "\(outcome.droppedSightings)"])
                }
            } else {
                return
            }
            if let refusal = outcome.refusal {
                rateLimited.warning(logger, key: "refused-\(refusal.reason)", at: receivedAt, "ignored a message",
                                    metadata: ["topic": "\(StrangerNodes.displayName(Substring(message.topic), limit: 160))", "reason": "\(refusal)"])
            }
            submit(outcome.events)
        case .tick(let now):
            if catchingUp {
                let caughtUp = now - pipeline.clock <= configuration.catchUpQuiet + configuration.pipeline.lateness
                guard caughtUp || now - lastMessageAt >= configuration.catchUpQuiet || now - startedAt >= 30_000 else { return }
                catchingUp = false
                logger.notice("caught up with what the broker kept", metadata: ["batches": "\(pipeline.counters.batches)",
                                                                                 "clock_behind_ms": "\(now - pipeline.clock)"])
            }
            submit(pipeline.advanceClock(to: now))
            if registryDirty && now - lastRegistryLoad >= 250 || now - lastRegistryLoad >= configuration.registryRefresh {
                await reloadRegistry(database, at: now)
            }
            if now - progressSavedAt >= configuration.progressInterval {
                saveProgress(at: now)
                publishPositions()
            }
            if now - statsAt >= configuration.statsInterval {
                statsAt = now
                logStatistics()
                let (mqtt, loopDropped) = inbound()
                let statistics = AggregatorStatistics(counters: pipeline.counters, strangers: pipeline.strangers, inbound: mqtt, loopDropped: loopDropped,
                                                      decisionToPublish: outbox?.latency.takeSummary() ?? LatencySummary(count: 0, p50: 0, p99: 0, max: 0))
                outbox?.submit(.statistics(statistics.encoded()))
            }
        case .registryChanged:
            registryDirty = true
        }
    }

    mutating func submit(_ events: [PresenceEvent]) {
        guard !events.isEmpty else { return }
        for event in events {
            logger.info("presence", metadata: ["event": "\(event.kind.rawValue)", "user": "\(event.user)", "beacon": "\(event.beacon)",
                                               "reason": "\(event.reason?.rawValue ?? "")"])
            if event.kind == .exit { lastSeenSaved[event.user] = nil }
        }
        let messages = notifications.notifications(for: events, registry: pipeline.registry)
        outbox?.submit(.events(events, messages, board.apply(events), decidedAt: WallClock.milliseconds()))
    }

    private mutating func reloadRegistry(_ database: PostgresConnection, at now: Int64) async {
        registryDirty = false
        lastRegistryLoad = now
        let registry: Registry
        do {
            registry = try await database.loadRegistry()
        } catch {
            logger.warning("could not reload the registry; keeping the one loaded before", metadata: ["error": "\(error)"])
            registryDirty = true
            return
        }
        let old = pipeline.registry
        guard registry != old else { return }
        submit(pipeline.replaceRegistry(registry, at: now))
        var changes = PresenceBoard.Changes()
        changes.beacons = registry.beacons.keys.filter { old.beacons[$0] == nil }.sorted().map { BeaconState(beacon: $0, users: []) }
        changes.clearedUsers = old.users.keys.filter { key in
            registry.users[key] == nil || (registry.users[key]?.isIncognito(at: now) ?? false) && !(old.users[key]?.isIncognito(at: now) ?? false)
        }.sorted()
        let deleted = old.beacons.keys.filter { registry.beacons[$0] == nil }.sorted()
        for beacon in deleted { board.forget(beacon: beacon) }
        if !changes.isEmpty || !deleted.isEmpty {
            outbox?.submit(.states(changes, deletedBeacons: deleted))
        }
        logger.info("registry reloaded", metadata: ["beacons": "\(registry.beacons.count)", "nodes": "\(registry.nodes.count)",
                                                    "users": "\(registry.users.count)", "devices": "\(registry.devices.count)"])
    }

    /// Publishes the user states whose estimated position moved (when nodes or beacons have
    /// coordinates).
    private mutating func publishPositions() {
        var changes = PresenceBoard.Changes()
        for user in pipeline.engine.presences.keys.sorted() {
            guard let position = pipeline.engine.position(of: user), let state = board.place(user, at: position) else { continue }
            changes.users.append(state)
        }
        if !changes.isEmpty { outbox?.submit(.states(changes, deletedBeacons: [])) }
    }

    private mutating func saveProgress(at now: Int64) {
        progressSavedAt = now
        var changed: [(user: String, time: Int64)] = []
        for (user, presence) in pipeline.engine.presences where lastSeenSaved[user] != presence.lastSeen {
            lastSeenSaved[user] = presence.lastSeen
            changed.append((user, presence.lastSeen))
        }
        outbox?.submit(.progress(clock: pipeline.engine.now, lastSeen: changed))
    }

    func logStatistics() {
        let c = pipeline.counters
        logger.info("statistics", metadata: [
            "batches": "\(c.batches)", "rejected": "\(c.rejectedBatches)", "sightings": "\(c.sightings)",
            "dropped_sightings": "\(c.droppedSightings)", "unmatched": "\(c.unmatched)", "observations": "\(c.observations)",
            "late": "\(pipeline.engine.statistics.late)", "events": "\(c.events)",
        ])
    }
}
