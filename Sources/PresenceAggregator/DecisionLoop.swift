import Logging
import PresenceCore
import PresenceHTTP
import PresenceMQTT
import PresencePostgres
import ServiceLifecycle

/// The aggregator's decision loop: one task that owns the `AggregatorCore`, feeds it the inbox
/// (messages, ticks, registries), answers the page's questions with it, and carries out what it
/// returns. It never waits on the database or the broker: records go to the journal, page updates
/// to the open pages, counters out at once. It starts from what the database and the journal say
/// (waiting for the database if it is away), opens the gate for the inbound connection, and on
/// shutdown decides everything received before that connection closed, saves progress and ends
/// the journal.
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
    private let ownership: ShardOwnership
    /// The open venue pages, and the metrics (with `--http`).
    private let live: LiveFeed?
    private let metrics: AggregatorMetrics?
    private let logger: Logger

    init(configuration: AggregatorConfiguration, inbox: LoopInbox, postgres: PostgresClient, journal: Journal, publisher: Publisher, health: AggregatorHealth,
         deadLetters: DeadLetters, calibration: PendingCalibration, ready: StartGate, ownership: ShardOwnership,
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
        self.ownership = ownership
        self.live = live
        self.metrics = metrics
        self.logger = logger
    }

    func run() async throws {
        defer {
            journal.finishAppending()
            inbox.dropQuestions()
        }
        let start: StartingState
        do {
            start = try await StartingState.load(configuration, postgres: postgres, journal: journal, logger: logger)
        } catch is CancellationError {
            return
        }
        // The venue's shards are shared with whichever aggregators run on the database: the core
        // decides for the users of the shards this one owns, from the start.
        guard let grant = await ownership.first() else { return }
        var coreConfiguration = configuration.core
        coreConfiguration.page = live != nil
        coreConfiguration.sharing = true
        coreConfiguration.name = configuration.topicName
        var core = AggregatorCore(configuration: coreConfiguration, registry: start.registry, sessions: start.sessions, zoneSessions: start.zoneSessions,
                                  savedClock: start.savedClock, recentNotifications: start.recentNotifications, storedOffsets: start.storedOffsets,
                                  owning: grant, now: WallClock.milliseconds())
        execute(core.resume(at: WallClock.milliseconds()), core)
        ready.open()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [inbox, tick = configuration.core.pipeline.tickInterval] in
                while !Task.isCancelled {
                    let now = WallClock.milliseconds()
                    guard (try? await Task.sleep(for: .milliseconds((now / tick + 1) * tick - now))) != nil else { return }
                    inbox.tick(at: WallClock.milliseconds())
                }
            }
            group.addTask {
                // What a burst left free goes back to the system once a minute, not at the next burst.
                while (try? await Task.sleep(for: .seconds(60))) != nil { FreeMemory.giveBack() }
            }
            await withGracefulShutdownHandler {
                var inARow = 0
                var sinceTick = 0
                var busy = false
                while true {
                    // Items already waiting are taken without a suspension each (foreign nodes send
                    // a message per sighting, by the ten thousand a second), letting the other tasks
                    // in now and then. While items come faster than one a millisecond, an empty
                    // inbox is looked at again a millisecond later rather than waited on, so that the
                    // loop is woken a thousand times a second at most, not once per item. A stream
                    // subscriber's read is one item, however many messages it holds.
                    var ready = inARow < 1_024 ? inbox.nextIfReady() : nil
                    if ready == nil {
                        inARow = 0
                        if busy {
                            try? await Task.sleep(for: .milliseconds(1))
                            ready = inbox.nextIfReady()
                        }
                        if ready == nil { ready = await inbox.next() }
                    }
                    guard let item = ready else { break }
                    inARow += 1
                    switch item {
                    case .message(let message, let receivedAt):
                        sinceTick += 1
                        let actions = message.payload.withUnsafeBytes { core.receive(topic: message.topic, payload: $0, at: receivedAt) }
                        // Most messages decide nothing yet; handing the core over costs a copy of it.
                        if !actions.isEmpty { execute(actions, core) }
                    case .messages(let messages, let receivedAt):
                        sinceTick += 1
                        inARow += messages.count - 1
                        messages.forEach { topic, payload in
                            let actions = core.receive(topicBytes: topic, payload: payload, at: receivedAt)
                            if !actions.isEmpty { execute(actions, core) }
                        }
                    case .tick:
                        busy = sinceTick >= 100
                        sinceTick = 0
                        if !core.isSubscribed, health.isSubscribed { core.subscribed(at: WallClock.milliseconds()) }
                        execute(core.tick(at: WallClock.milliseconds()), core)
                    case .registry(let registry, _):
                        execute(core.replaceRegistry(registry, at: WallClock.milliseconds()), core)
                    case .question(let answer):
                        answer(core)
                    case .grant(let grant, let taken):
                        execute(core.own(grant, at: WallClock.milliseconds()), core)
                        taken.resume(returning: true)
                    case .inbound(let up, let time):
                        execute(up ? core.inboundBack(at: time) : core.inboundDown(at: time), core)
                    }
                }
            } onGracefulShutdown: { [inbox] in
                // The inbound connection closes first and finishes the inbox; this is for a
                // shutdown that comes another way.
                inbox.finish()
            }
            group.cancelAll()
        }
        execute(core.finish(at: WallClock.milliseconds()), core)
        journal.finishAppending()
        // The inbox ends when the inbound connection has stopped; the group asks this loop to stop
        // next, and a service may not end before it is asked.
        try? await gracefulShutdown()
    }

    /// Carries out the core's actions (`core` answers a page that must start from a snapshot).
    private func execute(_ actions: [AggregatorCore.Action], _ core: borrowing AggregatorCore) {
        for action in actions {
            switch action {
            case .record(let record):
                journal.append(record)
            case .page(let updates):
                guard let live, live.pageCount > 0 else { continue }
                let snapshot = updates.contains(.snapshot) ? (core.pageSnapshotJSON(at: WallClock.milliseconds()), core.page?.cursor ?? 0) : nil
                live.publish(updates, snapshot: snapshot)
            case .statistics(let statistics, let report):
                metrics?.update(statistics)
                guard report else { continue }
                let message = AggregatorStatistics(aggregator: configuration.topicName, core: statistics, inbox: inbox.counters, journal: journal.status,
                                                   inFlight: publisher.inFlight, deadLetters: deadLetters.count,
                                                   decisionToPublish: publisher.latency.takeSummary())
                logger.info("statistics", metadata: message.metadata)
                publisher.publishNow(MQTTMessage(topic: configuration.topics.aggregatorStats, payload: message.encoded(), qos: 0))
            case .log(let line):
                logger.log(level: line.level.logLevel, "\(line.message)", metadata: line.metadata.mapValues { .string($0) })
            case .storeCalibration(let summary):
                calibration.offer(summary)
            case .health(let report, let topic):
                metrics?.update(report)
                publisher.publishNow(MQTTMessage(topic: topic, payload: report.encoded(), qos: 0, retain: true))
            case .refused(let refusal):
                logger.error("the decision core refused an input out of its order", metadata: ["refusal": "\(refusal)"])
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
