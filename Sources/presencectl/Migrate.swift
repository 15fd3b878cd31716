import ArgumentParser
import Logging
import PresenceCLI
import PresenceDatabaseCLI
import PresenceStore

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create or update the database schema (safe to run again).")

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let applied = try await withDatabase(connection) { db in
            try await db.migrate(logger: Logger(label: "presencectl"))
        }
        print(applied.isEmpty ? "schema is up to date" : "applied migrations \(applied.map(String.init).joined(separator: ", "))")
    }
}
