import Logging
import PresenceCore
import PresenceHTTP
import PresenceMQTT
import PresencePostgres
import ServiceLifecycle

/// The aggregator's decision loop: one task that owns the `AggregatorCore`, feeds it the inbox
/// (messages, ticks, registries) and carries out what it returns. It never waits on the database
/// or the broker: records go to the journal, counters out at once. It starts from what the
/// database and the journal say (waiting for the database if it is away), opens the gate for the
/// inbound connection, and on shutdown decides everything received before that connection closed,
/// saves progress and ends the journal.
final class DecisionLoop: Service {
    private let configuration: AggregatorConfiguration
    private let inbox: LoopInbox
    private let postgres: PostgresClient
    private let journal: Journal
    private let publisher: Publisher
    private let health: AggregatorHealth
    private let deadLetters: DeadLetters
    private let calibration: PendingCalibration
    private let ready: StartGate
    private let inboundStatistics: @Sendable () -> MQTTStatistics
    /// What the HTTP page shows, and the metrics (with `--http`).
    private let live: LiveFeed?
    private let metrics: AggregatorMetrics?
    private let logger: Logger

    init(configuration: AggregatorConfiguration, inbox: LoopInbox, postgres: PostgresClient, journal: Journal, publisher: Publisher, health: AggregatorHealth,
         deadLetters: DeadLetters, calibration: PendingCalibration, ready: StartGate, inboundStatistics: @escaping @Sendable () -> MQTTStatistics,
         live: LiveFeed?, metrics: AggregatorMetrics?, logger: Logger) {
        self.configuration = configuration
        self.inbox = inbox
        self.postgres = postgres
        self.journal = journal
        self.publisher = publisher
        self.health = health
        self.deadLetters = deadLetters
        self.calibration = calibration
        self.ready = ready
        self.inboundStatistics = inboundStatistics
        self.live = live
        self.metrics = metrics
        self.logger = logger
    }

    func run() async throws {
        defer { journal.finishAppending() }
        let start: StartingState
        do {
            start = try await StartingState.load(configuration, postgres: postgres, journal: journal, logger: logger)
        } catch is CancellationError {
            return
        }
        var core = AggregatorCore(configuration: configuration.core, registry: start.registry, sessions: start.sessions,
                                  savedClock: start.savedClock, recentNotifications: start.recentNotifications, storedOffsets: start.storedOffsets,
                                  now: WallClock.milliseconds())
        var shownAt: Int64 = 0
        live?.replaceRegistry(start.registry, at: WallClock.milliseconds())
        var discovery = configuration.homeAssistant.map { HomeAssistantDiscovery(configuration: $0, registry: start.registry) }
        execute(core.resume(at: WallClock.milliseconds()), &discovery)
        publish(discovery?.update(registry: start.registry, at: WallClock.milliseconds()))
        showNodes(core)
        ready.open()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [inbox, tick = configuration.core.pipeline.tickInterval] in
                while !Task.isCancelled {
                    let now = WallClock.milliseconds()
                    guard (try? await Task.sleep(for: .milliseconds((now / tick + 1) * tick - now))) != nil else { return }
                    inbox.tick(at: WallClock.milliseconds())
                }
            }
            await withGracefulShutdownHandler {
                while let item = await inbox.next() {
                    switch item {
                    case .message(let message, let receivedAt):
                        execute(message.payload.withUnsafeBytes { core.receive(topic: message.topic, payload: $0, at: receivedAt) }, &discovery)
                    case .tick:
                        if !core.isSubscribed, health.isSubscribed { core.subscribed(at: WallClock.milliseconds()) }
                        execute(core.tick(at: WallClock.milliseconds()), &discovery)
                        if live != nil, WallClock.milliseconds() - shownAt >= 1_000 {
                            shownAt = WallClock.milliseconds()
                            showNodes(core)
                        }
                    case .registry(let registry, _):
                        live?.replaceRegistry(registry, at: WallClock.milliseconds())
                        // Home Assistant drops removed entities before their states go.
                        publish(discovery?.update(registry: registry, at: WallClock.milliseconds()))
                        execute(core.replaceRegistry(registry, at: WallClock.milliseconds()), &discovery)
                        showNodes(core)
                    }
                }
            } onGracefulShutdown: { [inbox] in
                // The inbound connection closes first and finishes the inbox; this is for a
                // shutdown that comes another way.
                inbox.finish()
            }
            group.cancelAll()
        }
        execute(core.finish(at: WallClock.milliseconds()), &discovery)
        journal.finishAppending()
        // The inbox ends when the inbound connection has stopped; the group asks this loop to stop
        // next, and a service may not end before it is asked.
        try? await gracefulShutdown()
    }

    /// Brings the page's node table and the metrics up to the core's figures (with `--http`).
    private func showNodes(_ core: borrowing AggregatorCore) {
        guard let live, let metrics else { return }
        let now = WallClock.milliseconds()
        metrics.update(core.statistics(at: now), flaps: live.read { $0.flapCount })
        let registry = core.pipeline.registry
        let fitted = core.pipeline.selfCalibration?.applied ?? [:]
        let fleet = Dictionary((core.pipeline.fleet?.report(at: now).nodes ?? []).map { ($0.key, $0) }, uniquingKeysWith: { $1 })
        let rows = registry.nodes.values.sorted { $0.key < $1.key }.map { node in
            let offset: (Double, String) = node.pinned ? (node.rssiOffset, "pinned") : fitted[node.key].map { ($0, "fitted") } ?? (node.rssiOffset, "none")
            let health = fleet[node.key]
            return NodeRow(key: node.key, venue: node.venue, beacon: node.beacon, x: node.x, y: node.y, floor: node.floor,
                           online: health.flatMap { $0.state == .unknown ? nil : $0.state == .online }, sightingsPerSecond: health?.sightingsPerSecond,
                           lastSeen: health?.lastHeard, clockSkew: health?.skew, offset: offset.0, offsetSource: offset.1)
        }
        metrics.updateNodes(rows)
        live.replaceNodes(rows, at: now)
    }

    /// Appends Home Assistant's messages to the journal, if there are any.
    private func publish(_ messages: [OutboundMessage]?) {
        guard let messages, !messages.isEmpty else { return }
        journal.append(.messages(messages))
    }

    /// Carries out the core's actions; with Home Assistant discovery, the messages that mirror a
    /// record follow it into the journal.
    private func execute(_ actions: [AggregatorCore.Action], _ discovery: inout HomeAssistantDiscovery?) {
        for action in actions {
            switch action {
            case .record(let record):
                journal.append(record)
                live?.apply(record, at: WallClock.milliseconds())
                if case .decided(let decided) = record { metrics?.count(decided.events) }
                publish(discovery?.follow(record, at: WallClock.milliseconds()))
            case .statistics(let statistics):
                let message = AggregatorStatistics(core: statistics, inbound: inboundStatistics(), inbox: inbox.counters, journal: journal.status,
                                                   inFlight: publisher.inFlight, deadLetters: deadLetters.count,
                                                   decisionToPublish: publisher.latency.takeSummary())
                logger.info("statistics", metadata: message.metadata)
                publisher.publishNow(MQTTMessage(topic: configuration.topics.aggregatorStats, payload: message.encoded(), qos: 0))
            case .log(let line):
                logger.log(level: line.level.logLevel, "\(line.message)", metadata: line.metadata.mapValues { .string($0) })
            case .storeCalibration(let summary):
                calibration.offer(summary)
            case .health(let report):
                publisher.publishNow(MQTTMessage(topic: configuration.topics.health, payload: report.encoded(), qos: 0, retain: true))
            }
        }
    }
}

extension AggregatorCore.LogLine.Level {
    var logLevel: Logger.Level {
        switch self {
        case .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        }
    }
}
