import PresenceCore

/// The MQTT protocol version spoken to the broker.
public enum MQTTProtocolVersion: Sendable, Equatable {
    case v311
    case v5
}

/// Everything an `MQTTClient` needs to know, with defaults for all but the broker and client id.
public struct MQTTConfiguration: Sendable {
    /// The broker, credentials and whether to use TLS.
    public var url: MQTTURL
    /// The MQTT client identifier; unique per broker. Empty lets the library pick one (clean sessions only).
    public var clientID: String
    /// Start every connection with a fresh session on the broker.
    public var cleanSession = true
    /// Seconds between keep-alive pings; at least 5.
    public var keepAlive = 30
    /// The last will, published by the broker when the connection is lost without a clean disconnect.
    public var will: MQTTMessage?
    /// Published on every successful (re)connect, for example a retained "online" status;
    /// `MQTTClient.setBirth` replaces it.
    public var birth: MQTTMessage?
    /// Subscribed on every connect; `MQTTClient.subscribe(_:)` adds to them.
    public var subscriptions: [MQTTSubscription] = []
    /// The waits between connection attempts, the first and the longest, in whole seconds (at
    /// least 1; rounded up). Until a first attempt is under way they double as the policy says;
    /// after that libmosquitto keeps its own steps between the two (2.0.11: `first * (n+1)^2`, the
    /// count started again at each connection made). `stop()` can take the longest wait while the
    /// broker is unreachable: libmosquitto sleeps between attempts and cannot be woken.
    public var retry = RetryPolicy(first: .seconds(1), longest: .seconds(30))
    /// The most QoS 1/2 messages handed to libmosquitto and not yet acknowledged; further
    /// `publish` calls wait. libmosquitto's own queue is unbounded and slows down when long.
    public var maxInFlight = 100
    /// Bytes of unread inbound messages kept (payload, topic and 64 bytes each); newer messages
    /// are dropped (and counted) while they would not fit.
    public var inboxBytes = 64 << 20
    /// Where inbound messages go: nil puts them in `MQTTClient.messages` (bounded by `inboxBytes`,
    /// what does not fit counted as an inbound drop); a handler takes each one on libmosquitto's
    /// network thread as it arrives, must not block, and counts what it drops itself.
    public var onMessage: (@Sendable (MQTTMessage) -> Void)?
    /// A PEM file of CA certificates for `mqtts`; nil uses the operating system's certificates.
    public var caFile: String?
    /// A PEM client certificate and its unencrypted key, for brokers that ask for one (`mqtts`
    /// with a `caFile` only).
    public var certFile: String?
    public var keyFile: String?
    /// MQTT 5 by default; 3.1.1 for older brokers.
    public var protocolVersion = MQTTProtocolVersion.v5

    public init(url: MQTTURL, clientID: String) {
        self.url = url
        self.clientID = clientID
    }
}

extension MQTTConfiguration {
    /// Refuses values libmosquitto would reject later, or that make no sense, naming the bad one.
    func validate() throws(MQTTError) {
        func bad(_ what: String) -> MQTTError { MQTTError(message: "invalid MQTT configuration: \(what)") }
        if clientID.isEmpty && !cleanSession { throw bad("an empty client id needs cleanSession") }
        if clientID.utf8.count > 65_535 { throw bad("client id longer than 65535 bytes") }
        if keepAlive < 5 || keepAlive > 65_535 { throw bad("keepAlive \(keepAlive) is not in 5...65535 seconds") }
        if retry.longest > .seconds(86_400) { throw bad("the longest reconnect wait \(retry.longest) is over a day") }
        if maxInFlight < 1 || maxInFlight > 65_535 { throw bad("maxInFlight \(maxInFlight) is not in 1...65535") }
        if inboxBytes < 1 { throw bad("inboxBytes \(inboxBytes) is below 1") }
        if (certFile == nil) != (keyFile == nil) { throw bad("a client certificate needs its key, and a key its certificate") }
        if !url.tls, caFile != nil || certFile != nil { throw bad("CA and certificate files need an mqtts:// broker") }
        if certFile != nil, caFile == nil { throw bad("a client certificate needs a CA file") }
        if let will { try MQTTClient.validate(will) }
        if let birth { try MQTTClient.validate(birth) }
        for subscription in subscriptions { try MQTTClient.validate(subscription) }
    }
}

extension RetryPolicy {
    /// The policy's waits in whole seconds, as libmosquitto takes them: at least 1, rounded up.
    var wholeSeconds: (first: Int, longest: Int) {
        func seconds(_ duration: Duration) -> Int {
            let (whole, fraction) = duration.components
            return max(1, Int(clamping: whole) + (fraction > 0 ? 1 : 0))
        }
        return (seconds(first), max(seconds(first), seconds(longest)))
    }
}
