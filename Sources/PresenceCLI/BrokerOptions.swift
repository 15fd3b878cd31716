import ArgumentParser
import PresenceCore
import PresenceMQTT

/// The broker and topic prefix flags of every command that talks MQTT, with their environment
/// variables (`PRESENCE_BROKER_URL`, `PRESENCE_TOPIC_PREFIX`).
public struct BrokerOptions: ParsableArguments {
    @Option(help: "MQTT broker, mqtt://[user:pass@]host[:port] or mqtts://... (default: $PRESENCE_BROKER_URL).")
    public var broker: String?

    @Option(help: "Topic prefix (default: $PRESENCE_TOPIC_PREFIX or 'presence').")
    public var topicPrefix: String?

    public init() {}

    public func brokerURL() throws -> MQTTURL {
        guard let text = broker ?? Environment.value("PRESENCE_BROKER_URL") else {
            throw ValueError("no broker: pass --broker mqtt://host:port or set PRESENCE_BROKER_URL")
        }
        return try MQTTURL(parsing: text)
    }

    public func topics() throws -> Topics {
        try Topics(prefix: topicPrefix ?? Environment.value("PRESENCE_TOPIC_PREFIX") ?? "presence")
    }
}
