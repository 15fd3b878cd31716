import Logging
import ServiceLifecycle

/// The aggregator's long-running parts, in the order they start; a `ServiceGroup` stops them in
/// the reverse order: the inbound connection first (no more input), then the decision loop (it
/// decides what came before and ends the journal), the registry watcher, the publisher (it
/// publishes what the journal holds, unless the broker is away), the database writer (it stores
/// it, unless the database is away), and the journal last. Whatever was not published or stored
/// stays in the journal for the next start.
public enum AggregatorServices {
    public static func make(_ configuration: AggregatorConfiguration, logger: Logger) throws -> [any Service] {
        let directory = configuration.stateDirectory
        let journal = try Journal(directory: directory + "/journal", maximumBytes: configuration.journalBytes, logger: logger)
        let inbox = LoopInbox(limit: configuration.inboundBytes)
        let ready = StartGate()
        let health = AggregatorHealth()
        let deadLetters = DeadLetters(directory: directory, logger: logger)
        let calibration = PendingCalibration()
        let publisher = try Publisher(configuration: configuration, journal: journal, health: health, deadLetters: deadLetters, logger: logger)
        let writer = DatabaseWriter(configuration: configuration, journal: journal, health: health, deadLetters: deadLetters,
                                    calibration: calibration, acknowledged: { publisher.takeAcknowledged() }, logger: logger)
        let inbound = try InboundConnection(configuration: configuration, inbox: inbox, ready: ready, health: health, logger: logger)
        let loop = DecisionLoop(configuration: configuration, inbox: inbox, journal: journal, publisher: publisher, health: health,
                                deadLetters: deadLetters, calibration: calibration, ready: ready, inboundStatistics: { inbound.statistics }, logger: logger)
        let registry = RegistryWatcher(configuration: configuration, inbox: inbox, logger: logger)
        let retention = RetentionService(database: configuration.database, retention: configuration.retention, logger: logger)
        return [JournalService(journal: journal), writer, publisher, registry, retention, loop, inbound]
    }
}
