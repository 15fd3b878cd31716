import ArgumentParser
import PresenceCore
import PresenceMQTT

/// The broker and topic prefix flags of every command that talks MQTT, with their environment
/// variables (`PRESENCE_BROKER_URL`, `PRESENCE_TOPIC_PREFIX`, `PRESENCE_BROKER_CA_FILE`,
/// `PRESENCE_BROKER_CERT_FILE`, `PRESENCE_BROKER_KEY_FILE`, `PRESENCE_BROKER_PASSWORD_FILE`).
public struct BrokerOptions: ParsableArguments {
    @Option(help: "MQTT broker, mqtt://[user[:pass]@]host[:port] or mqtts://... (default: $PRESENCE_BROKER_URL).")
    public var broker: String?

    @Option(help: "Topic prefix (default: $PRESENCE_TOPIC_PREFIX or 'presence').")
    public var topicPrefix: String?

    @Option(help: "PEM CA certificates the mqtts broker's certificate is checked against (default: $PRESENCE_BROKER_CA_FILE, else the system's).")
    public var caFile: String?

    @Option(help: "PEM client certificate for the broker, with --key (default: $PRESENCE_BROKER_CERT_FILE).")
    public var cert: String?

    @Option(help: "Its unencrypted PEM key (default: $PRESENCE_BROKER_KEY_FILE).")
    public var key: String?

    @Option(help: "A file whose first line is the broker password of the URL's user, kept out of the URL and of `ps` (default: $PRESENCE_BROKER_PASSWORD_FILE).")
    public var brokerPasswordFile: String?

    public init() {}

    /// The broker these flags describe; a bad value or an unreadable file names itself.
    public func mqttBroker() throws -> MQTTBroker {
        guard let text = broker ?? Environment.value("PRESENCE_BROKER_URL") else {
            throw ValueError("no broker: pass --broker mqtt://host:port or set PRESENCE_BROKER_URL")
        }
        var url = try MQTTURL(parsing: text)
        if let passwordFile = brokerPasswordFile ?? Environment.value("PRESENCE_BROKER_PASSWORD_FILE") {
            guard url.username != nil else {
                throw ValueError("broker password file '\(passwordFile)' needs a user name in the broker URL, such as mqtts://node-1@host")
            }
            guard url.password == nil else {
                throw ValueError("broker password file '\(passwordFile)' given, but the broker URL has a password too: keep only one")
            }
            url.password = try SecretFile.firstLine(of: passwordFile, what: "broker password file")
        }
        let files = [("--ca-file", caFile ?? Environment.value("PRESENCE_BROKER_CA_FILE")), ("--cert", cert ?? Environment.value("PRESENCE_BROKER_CERT_FILE")),
                     ("--key", key ?? Environment.value("PRESENCE_BROKER_KEY_FILE"))]
        for case (let flag, let path?) in files {
            guard url.tls else { throw ValueError("\(flag) '\(path)' needs an mqtts:// broker") }
            try SecretFile.requireReadable(path, what: flag)
        }
        let broker = MQTTBroker(url: url, caFile: files[0].1, certFile: files[1].1, keyFile: files[2].1)
        if (broker.certFile == nil) != (broker.keyFile == nil) {
            throw ValueError("--cert and --key go together: '\(broker.certFile ?? broker.keyFile ?? "")' has no partner")
        }
        if let cert = broker.certFile, broker.caFile == nil {
            throw ValueError("--cert '\(cert)' needs --ca-file: the CA the broker's certificate is checked against")
        }
        return broker
    }

    public func topics() throws -> Topics {
        try Topics(prefix: topicPrefix ?? Environment.value("PRESENCE_TOPIC_PREFIX") ?? "presence")
    }
}
