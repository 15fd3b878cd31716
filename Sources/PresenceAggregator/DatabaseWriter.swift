import Logging
import PresenceCore
import PresencePostgres
import PresenceStore
import ServiceLifecycle
import Synchronization

/// Applies the journal to PostgreSQL through the client, in order and in batches (up to 1,000
/// records a transaction): events with their session changes, notifications, progress, the events
/// the broker has acknowledged, and the journal position reached, all in one transaction, so that a
/// restart resumes exactly where it stopped. While the database is away it says so (the aggregator's
/// status turns degraded) and tries again under the client's retry policy; the journal keeps what
/// waits. A record the database refuses for good (not a lost connection nor a timeout) is set aside
/// in the dead letters, found by applying the batch one record at a time, and the writer moves on.
/// After a failure it asks the database again how far it had applied the journal: the one that
/// answers may be a standby promoted in place of the one that failed, without the last
/// transactions, and what it lacks is stored again (storing is idempotent by event id).
/// After each transaction it also stores the node offsets the loop left (`PendingCalibration`),
/// on their own: a failure there loses a re-derivable write, never a record.
final class DatabaseWriter: Service {
    private let configuration: AggregatorConfiguration
    private let postgres: PostgresClient
    private let journal: Journal
    private let health: AggregatorHealth
    private let deadLetters: DeadLetters
    private let calibration: PendingCalibration
    private let acknowledged: @Sendable () -> [(end: UInt64, id: String)]
    private let logger: Logger

    /// `acknowledged` hands over the events the broker acknowledged since it was last called.
    init(configuration: AggregatorConfiguration, postgres: PostgresClient, journal: Journal, health: AggregatorHealth, deadLetters: DeadLetters,
         calibration: PendingCalibration, acknowledged: @escaping @Sendable () -> [(end: UInt64, id: String)], logger: Logger) {
        self.configuration = configuration
        self.postgres = postgres
        self.journal = journal
        self.health = health
        self.deadLetters = deadLetters
        self.calibration = calibration
        self.acknowledged = acknowledged
        self.logger = logger
    }

    func run() async throws {
        await journal.waitUntilOpen()
        var writer = Writing(cursor: journal.cursor(of: .database))
        while !Task.isCancelled {
            let entries = await journal.records(from: writer.cursor, limit: 1_000)
            guard !entries.isEmpty else { break }
            guard await apply(entries, &writer) else { break }
        }
        // The journal ends when the loop has stopped; the group asks this writer to stop after it.
        try? await gracefulShutdown()
    }

    /// Where the writer has got to.
    private struct Writing {
        var cursor: UInt64
        var positionChecked = false
        /// Events the broker acknowledged, not yet marked (their record may not be stored yet).
        var published: [(end: UInt64, id: String)] = []
        /// Failed attempts in a row.
        var failures = 0
    }

    /// Applies `entries`, retrying while the database is away or refuses for now; false when
    /// shutting down meanwhile (what is left stays in the journal).
    private func apply(_ entries: [Journal.Entry], _ writer: inout Writing) async -> Bool {
        var entries = entries
        while true {
            do {
                let done = try await postgres.withConnection { database in
                    if !writer.positionChecked {
                        // Where this database says it got to in this journal; one that never applied
                        // it (a copy restored from before it began) needs every record still held.
                        let stored = try await database.journalPosition(clientID: configuration.effectiveClientID)
                        let reached = stored.flatMap { $0.journal == journal.identity ? $0.position : nil } ?? journal.start
                        writer.positionChecked = true
                        if reached > writer.cursor {
                            writer.cursor = reached
                            entries = entries.filter { $0.start >= reached }
                            journal.consumed(.database, upTo: reached)
                            if entries.isEmpty { return true }
                        } else if let first = entries.first, reached < first.start {
                            logger.notice("the database lacks records the journal still holds (a restored copy, or a standby promoted behind?); storing them again",
                                          metadata: ["from": "\(reached)", "to": "\(first.start)"])
                            writer.cursor = reached
                            return true
                        }
                    }
                    writer.published += acknowledged()
                    do {
                        try await store(entries, &writer, database)
                    } catch let error as PostgresError where !error.isTransient {
                        try await applyOneByOne(entries, &writer, database)
                    }
                    await storeCalibration(database)
                    return true
                }
                if writer.failures > 0 { logger.notice("the database takes records again; storing what waited in the journal") }
                health.database(reachable: true)
                writer.failures = 0
                return done
            } catch is CancellationError {
                return false
            } catch {
                if writer.failures == 0 {
                    logger.error("cannot store in the database; events are still published, and stored when it returns",
                                 metadata: ["error": "\(error)"])
                }
                health.database(reachable: false)
                writer.failures += 1
                writer.positionChecked = false
                if Task.isShuttingDownGracefully || Task.isCancelled { return false }
                guard (try? await cancelWhenGracefulShutdown({ [delay = postgres.retry.delay(after: writer.failures)] in
                    try await Task.sleep(for: delay)
                })) != nil else {
                    return false
                }
            }
        }
    }

    /// Stores the node offsets waiting, if any. One the database refuses is dropped (the next fit
    /// that moves brings new ones); one it could not take for a lost connection waits for the next
    /// transaction, unless newer ones come first.
    private func storeCalibration(_ database: PostgresConnection) async {
        guard let (waiting, generation) = calibration.take() else { return }
        do {
            try await database.storeNodeCalibration(waiting)
        } catch let error as PostgresError where !error.isTransient {
            logger.warning("could not store the fitted node offsets; they are fitted again", metadata: ["error": "\(error)"])
        } catch {
            calibration.giveBack(waiting, generation: generation)
        }
    }

    /// Finds the records of a batch the database refuses: each alone, setting aside those it refuses.
    private func applyOneByOne(_ entries: [Journal.Entry], _ writer: inout Writing, _ database: PostgresConnection) async throws {
        for entry in entries {
            do {
                try await store([entry], &writer, database)
            } catch let error as PostgresError where !error.isTransient {
                deadLetters.refusedByDatabase(entry, error: error)
                var skip = StoreBatch()
                skip.journal = JournalPosition(clientID: configuration.effectiveClientID, journal: journal.identity, position: entry.end)
                try await database.store(skip)
                advance(&writer, to: entry.end)
            }
        }
    }

    /// Stores `entries` in one transaction, with the position they reach.
    private func store(_ entries: [Journal.Entry], _ writer: inout Writing, _ database: PostgresConnection) async throws {
        guard let last = entries.last else { return }
        var batch = StoreBatch()
        var lastSeen: [String: Int64] = [:]
        for entry in entries {
            switch entry.record {
            case .decided(let decided):
                batch.events += decided.messages.filter { $0.event != nil }
                batch.zoneEvents += decided.messages.filter { $0.zoneEvent != nil }
                batch.notifications += decided.notifications
            case .progress(let progress):
                batch.clock = (configuration.effectiveClientID, max(batch.clock?.time ?? .min, progress.clock))
                for seen in progress.lastSeen { lastSeen[seen.user] = max(lastSeen[seen.user] ?? .min, seen.time) }
            case .erased(let users):
                batch.erasedUsers += users
            }
        }
        batch.lastSeen = lastSeen.map { .init(user: $0.key, time: $0.value) }.sorted { $0.user < $1.user }
        batch.published = writer.published.filter { $0.end <= last.end }.map(\.id)
        batch.journal = JournalPosition(clientID: configuration.effectiveClientID, journal: journal.identity, position: last.end)
        let report = try await database.store(batch)
        writer.published.removeAll { $0.end <= last.end }
        if !report.staleSessionsClosed.isEmpty {
            var metadata: Logger.Metadata = ["sessions": "\(report.staleSessionsClosed.count)"]
            if configuration.logIdentities { metadata["users"] = "\(report.staleSessionsClosed.prefix(3).joined(separator: ", "))" }
            logger.warning("closed sessions the engine did not know about", metadata: metadata)
        }
        if !report.exitsWithoutSession.isEmpty {
            var metadata: Logger.Metadata = ["exits": "\(report.exitsWithoutSession.count)"]
            if configuration.logIdentities { metadata["sessions"] = "\(report.exitsWithoutSession.prefix(3).joined(separator: ", "))" }
            logger.warning("exits found no open session", metadata: metadata)
        }
        advance(&writer, to: last.end)
    }

    private func advance(_ writer: inout Writing, to position: UInt64) {
        writer.cursor = max(writer.cursor, position)
        journal.consumed(.database, upTo: writer.cursor)
    }
}
