import Logging
import PresenceCore
import PresencePostgres
import PresenceStore

/// What the decision loop starts from: the registry, the sessions and zone stays open when the
/// aggregator stopped, how far it had decided, the notifications within the cool-down and (with
/// `--self-calibrate`) the node offsets fitted before, as the database
/// says them, with the journal's records it has not applied yet laid over them (`JournalFold`).
/// The journal is opened here, bound to the database: one written for another database (or topic
/// prefix) is moved aside and nothing in it is laid over this one.
struct StartingState: Sendable {
    var registry: Registry
    var sessions: [Presence]
    var zoneSessions: [ZoneSession]
    var savedClock: Int64?
    var recentNotifications: [PresenceNotification]
    var storedOffsets: [String: Double]

    /// Reads it, waiting for the database while it is unreachable (the client says so).
    static func load(_ configuration: AggregatorConfiguration, postgres: PostgresClient, journal: Journal, logger: Logger) async throws -> StartingState {
        // The position first, then the sessions: the sessions then hold at least what the
        // position says, and laying records over them again changes nothing.
        let (registry, storedOffsets, fold) = try await postgres.withConnection { database in
            try await requireSchema(database)
            let stored = try await database.journalPosition(clientID: configuration.effectiveClientID)
            let binding = JournalBinding(database: try await database.databaseIdentity(), topicPrefix: configuration.topics.prefix)
            try journal.open(for: binding, storedJournal: stored?.journal)
            let fold = JournalFold(sessions: try await database.openSessions(), zoneSessions: try await database.openZoneSessions(),
                                   clock: try await database.savedClock(clientID: configuration.effectiveClientID),
                                   notifications: try await database.recentNotifications(within: configuration.core.notificationCooldown))
            let storedOffsets = configuration.core.pipeline.selfCalibrate ? try await database.storedNodeOffsets() : [:]
            return (try await database.loadRegistry(), storedOffsets, (fold, stored.flatMap { $0.journal == journal.identity ? $0.position : nil }))
        }
        var (laid, cursor) = (fold.0, fold.1 ?? journal.start)
        var count = 0
        // Nothing appends before the loop starts: the journal's end stands still meanwhile.
        while cursor < journal.status.durable {
            let entries = await journal.records(from: cursor, limit: 1_000)
            guard let last = entries.last else { break }
            for entry in entries { laid.apply(entry.record) }
            count += entries.count
            cursor = last.end
        }
        if count > 0 {
            logger.notice("laid the journal's records the database lacks over what it says", metadata: ["records": "\(count)"])
        }
        return StartingState(registry: registry, sessions: laid.openSessions, zoneSessions: laid.openZoneSessions, savedClock: laid.clock, recentNotifications: laid.notifications,
                             storedOffsets: storedOffsets)
    }

    private static func requireSchema(_ database: PostgresConnection) async throws {
        let needed = Migration.all.map(\.version).max() ?? 0
        let current: Int
        do {
            current = try await database.query("SELECT COALESCE(max(version), 0) FROM presence.migrations").rows.first?.int(0) ?? 0
        } catch let error as PostgresError where error.sqlState == "42P01" || error.sqlState == "3F000" {
            current = 0
        }
        guard current >= needed else {
            throw AggregatorError("the database schema is at version \(current) but this aggregator needs \(needed): run `presencectl migrate` first")
        }
    }
}

/// Why the aggregator cannot run.
public struct AggregatorError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) {
        self.description = description
    }
}
