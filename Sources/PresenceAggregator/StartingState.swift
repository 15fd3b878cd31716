import Logging
import PresenceCore
import PresencePostgres
import PresenceStore

/// What the decision loop starts from, read from the database: the registry, the sessions open
/// when the aggregator stopped, how far it had decided, and the notifications within the cool-down.
struct StartingState: Sendable {
    var registry: Registry
    var sessions: [Presence]
    var savedClock: Int64?
    var recentNotifications: [PresenceNotification]

    /// Reads it, waiting for the database while it is unreachable.
    static func load(_ configuration: AggregatorConfiguration, logger: Logger) async throws -> StartingState {
        let database = try await PostgresConnection.connectRetrying(configuration.database, purpose: "starting", logger: logger)
        do {
            try await requireSchema(database)
            let state = StartingState(
                registry: try await database.loadRegistry(), sessions: try await database.openSessions(),
                savedClock: try await database.savedClock(clientID: configuration.effectiveClientID),
                recentNotifications: try await database.recentNotifications(within: configuration.core.notificationCooldown))
            await database.close()
            return state
        } catch {
            await database.close()
            throw error
        }
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
