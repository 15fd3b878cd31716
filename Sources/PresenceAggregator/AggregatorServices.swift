import Logging
import PresenceCore
import PresenceHTTP
import PresenceMQTT
import PresencePostgres
import ServiceLifecycle

/// The aggregator's long-running parts, in the order they start; a `ServiceGroup` stops them in
/// the reverse order: the inbound connection first (no more input), then the decision loop (it
/// decides what came before and ends the journal), the retention and the registry watcher, the
/// publisher (it publishes what the journal holds, unless the broker is away), the database writer
/// (it stores it, unless the database is away), the journal (it writes what is queued and saves
/// its cursors), and the database client last (it closes its connections). Whatever was not
/// published or stored stays in the journal for the next start. With `--http`, the HTTP server
/// starts last and stops first.
public enum AggregatorServices {
    public static func make(_ configuration: AggregatorConfiguration, logger: Logger) throws -> [any Service] {
        let directory = configuration.stateDirectory
        let journal = Journal(directory: directory + "/journal", maximumBytes: configuration.journalBytes, cacheBytes: configuration.journalCacheBytes,
                              logger: logger)
        let inbox = LoopInbox(limit: configuration.inboundBytes)
        let ready = StartGate()
        let health = AggregatorHealth()
        let postgres = PostgresClient(configuration: configuration.database, retry: configuration.retry, logger: logger) { reachable in
            health.database(reachable: reachable)
        }
        let deadLetters = DeadLetters(directory: directory, logger: logger)
        let calibration = PendingCalibration()
        let live = configuration.http.map { _ in LiveFeed() }
        // swift-metrics is bootstrapped before the first metric is made, or that one goes nowhere.
        let prometheus = configuration.http.map { _ in PrometheusBootstrap.registry }
        let metrics = prometheus.map { _ in AggregatorMetrics() }
        let publisher = try Publisher(configuration: configuration, journal: journal, health: health, deadLetters: deadLetters, metrics: metrics,
                                      logger: logger)
        let writer = DatabaseWriter(configuration: configuration, postgres: postgres, journal: journal, health: health, deadLetters: deadLetters,
                                    calibration: calibration, acknowledged: { publisher.takeAcknowledged() }, logger: logger)
        let inbound = try InboundConnection(configuration: configuration, inbox: inbox, ready: ready, health: health, logger: logger)
        let ownership = ShardOwnership(clientID: configuration.effectiveClientID, postgres: postgres, inbox: inbox, inbound: inbound, journal: journal,
                                       logger: logger)
        let loop = DecisionLoop(configuration: configuration, inbox: inbox, postgres: postgres, journal: journal, publisher: publisher, health: health,
                                deadLetters: deadLetters, calibration: calibration, ready: ready, ownership: ownership,
                                live: live, metrics: metrics, logger: logger)
        let registry = RegistryWatcher(configuration: configuration, postgres: postgres, inbox: inbox, logger: logger)
        let history = HistoryMaintenance(postgres: postgres, retention: configuration.retention, logger: logger)
        let services: [any Service] = [postgres, journal, ownership, writer, publisher, registry, history, loop, inbound]
        guard let address = configuration.http, let live, let metrics, let prometheus else { return services }
        let visits = VisitsReader(postgres: postgres, logger: logger)
        let readiness: @Sendable () -> [ReadinessCheck] = {
            let broker = inbound.problem ?? (publisher.isConnected ? nil : "the publishing connection is not connected to the broker")
            return [
                ReadinessCheck("broker", broker == nil, problem: broker), ReadinessCheck("database", health.databaseReachable),
                ReadinessCheck("registry", ready.isOpen),
            ]
        }
        let sources = VenueServer.Sources(
            feed: live, metrics: prometheus,
            readiness: readiness,
            page: { question in
                await inbox.answer(within: .seconds(2)) { core -> VenueServer.PageAnswer in
                    switch question {
                    case .snapshot(let now): .json(core.pageSnapshotJSON(at: now))
                    case .presence(let now): .json(core.pagePresenceJSON(at: now))
                    case .events(let after, let limit): .json(core.pageEventsJSON(after: after, limit: limit))
                    case .nodes: .json(core.pageNodesJSON())
                    case .stream(let now): .stream(live.attach(snapshot: core.pageSnapshotJSON(at: now), cursor: core.page?.cursor ?? 0))
                    }
                }
            },
            visits: { try await visits.visits(since: $0) },
            beforeScrape: {
                let journal = journal.status
                metrics.updateShell(AggregatorMetrics.Shell(
                    ready: readiness().allSatisfy(\.passed), inboundConnected: inbound.isConnected, publishConnected: publisher.isConnected,
                    databaseReachable: health.databaseReachable, inFlight: publisher.inFlight,
                    journalUnpublished: Int64(clamping: journal.end - min(journal.end, journal.published)),
                    journalUnapplied: Int64(clamping: journal.end - min(journal.end, journal.applied)), inboxWaitingBytes: inbox.counters.waitingBytes,
                    inboundDropped: inbox.counters.dropped, deadLetters: deadLetters.count, pages: live.pageCount))
            },
            now: { WallClock.milliseconds() })
        return services + [VenueServer(host: address.host, port: address.port, sources: sources, logger: logger)]
    }
}
