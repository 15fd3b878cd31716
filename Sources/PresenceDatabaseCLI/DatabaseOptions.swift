import ArgumentParser
import PresenceCLI
import PresenceCore
import PresencePostgres

/// The database flag of the commands that reach PostgreSQL, with its environment variable
/// (`PRESENCE_DATABASE_URL`).
public struct DatabaseOptions: ParsableArguments {
    @Option(help: "PostgreSQL URL, postgres://user[:pass]@host[:port]/db (default: $PRESENCE_DATABASE_URL).")
    public var database: String?

    public init() {}

    public func databaseConfiguration() throws -> PostgresConfiguration {
        guard let text = database ?? Environment.value("PRESENCE_DATABASE_URL") else {
            throw ValueError("no database: pass --database postgres://user@host:port/db or set PRESENCE_DATABASE_URL")
        }
        guard text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") || text.contains("=") else {
            throw ValueError("database '\(DatabaseOptions.redacted(text))' is not valid: expected postgres://user@host:port/db")
        }
        return PostgresConfiguration(url: text)
    }

    /// `url` without its password, for messages.
    static func redacted(_ url: String) -> String {
        let parts = url.split(separator: "@", maxSplits: 1)
        guard parts.count == 2, let colon = parts[0].lastIndex(of: ":"), parts[0][colon...].count > 1,
              !parts[0][parts[0].index(after: colon)...].hasPrefix("//") else { return url }
        return String(parts[0][..<colon]) + ":***@" + String(parts[1])
    }
}
