import Logging
import PresenceCLI
import PresenceDatabaseCLI
import PresencePostgres

/// Opens the database for one command, runs `body` and closes it.
func withDatabase<T: Sendable>(_ options: ConnectionOptions, _ body: (PostgresConnection) async throws -> T) async throws -> T {
    let logger = Logger(label: "presencectl")
    let database = try await PostgresConnection.connect(try options.databaseConfiguration(), logger: logger)
    do {
        let result = try await body(database)
        await database.close()
        return result
    } catch {
        await database.close()
        throw error
    }
}
