import ArgumentParser
import PresenceCLI
import PresenceCore
import PresencePostgres

/// The database flags of the commands that reach PostgreSQL, with their environment variables
/// (`PRESENCE_DATABASE_URL`, `PRESENCE_DATABASE_URL_FILE`). libpq's own `PGPASSFILE` and
/// `PGSERVICEFILE` work too, for a URL without a password.
public struct DatabaseOptions: ParsableArguments {
    @Option(help: "PostgreSQL URL, postgres://user[:pass]@host[:port]/db (default: $PRESENCE_DATABASE_URL).")
    public var database: String?

    @Option(help: "A file whose first line is the PostgreSQL URL, kept out of `ps` and the environment (default: $PRESENCE_DATABASE_URL_FILE).")
    public var databaseUrlFile: String?

    public init() {}

    public func databaseConfiguration() throws -> PostgresConfiguration {
        let file = databaseUrlFile ?? (database == nil ? Environment.value("PRESENCE_DATABASE_URL_FILE") : nil)
        if database != nil, let databaseUrlFile {
            throw ValueError("--database-url-file '\(databaseUrlFile)' given with --database: keep only one")
        }
        guard let text = try file.map({ try SecretFile.firstLine(of: $0, what: "database URL file") }) ?? database
            ?? Environment.value("PRESENCE_DATABASE_URL") else {
            throw ValueError("no database: pass --database postgres://user@host:port/db or set PRESENCE_DATABASE_URL or PRESENCE_DATABASE_URL_FILE")
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
