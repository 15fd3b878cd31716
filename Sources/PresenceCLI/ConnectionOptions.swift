import ArgumentParser
import PresenceCore
import PresenceMQTT
import PresencePostgres

/// The broker, database and topic prefix flags every command shares, with their environment
/// variables (`PRESENCE_BROKER_URL`, `PRESENCE_DATABASE_URL`, `PRESENCE_TOPIC_PREFIX`).
public struct ConnectionOptions: ParsableArguments {
    @Option(help: "MQTT broker, mqtt://[user:pass@]host[:port] or mqtts://... (default: $PRESENCE_BROKER_URL).")
    public var broker: String?

    @Option(help: "PostgreSQL URL, postgres://user[:pass]@host[:port]/db (default: $PRESENCE_DATABASE_URL).")
    public var database: String?

    @Option(help: "Topic prefix (default: $PRESENCE_TOPIC_PREFIX or 'presence').")
    public var topicPrefix: String?

    public init() {}

    public func brokerURL() throws -> MQTTURL {
        guard let text = broker ?? Environment.value("PRESENCE_BROKER_URL") else {
            throw ValueError("no broker: pass --broker mqtt://host:port or set PRESENCE_BROKER_URL")
        }
        return try MQTTURL(parsing: text)
    }

    public func databaseConfiguration() throws -> PostgresConfiguration {
        guard let text = database ?? Environment.value("PRESENCE_DATABASE_URL") else {
            throw ValueError("no database: pass --database postgres://user@host:port/db or set PRESENCE_DATABASE_URL")
        }
        guard text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") || text.contains("=") else {
            throw ValueError("database '\(ConnectionOptions.redacted(text))' is not valid: expected postgres://user@host:port/db")
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

    public func topics() throws -> Topics {
        try Topics(prefix: topicPrefix ?? Environment.value("PRESENCE_TOPIC_PREFIX") ?? "presence")
    }
}
