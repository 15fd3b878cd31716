/// Where a client connects and how it proves who it is and checks who it talks to: the URL (host,
/// port, user, password, `mqtts` for TLS) and, for TLS, the CA file the broker's certificate is
/// checked against (nil: the operating system's CAs) and an optional client certificate and key.
public struct MQTTBroker: Sendable, Equatable, CustomStringConvertible {
    public var url: MQTTURL
    public var caFile: String?
    public var certFile: String?
    public var keyFile: String?

    public init(url: MQTTURL, caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil) {
        self.url = url
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
    }

    /// The URL without its password.
    public var description: String { url.description }
}

extension MQTTConfiguration {
    /// A configuration for `broker` with its TLS files.
    public init(broker: MQTTBroker, clientID: String) {
        self.init(url: broker.url, clientID: clientID)
        caFile = broker.caFile
        certFile = broker.certFile
        keyFile = broker.keyFile
    }
}
