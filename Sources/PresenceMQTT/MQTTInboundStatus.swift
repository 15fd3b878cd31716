/// A subscription the broker refused: the filter and the broker's SUBACK answer (0x80, "failure",
/// is MQTT 3.1.1's only one: mosquitto gives it for a filter its ACL does not let the client read).
public struct MQTTRefusal: Sendable, Equatable, CustomStringConvertible {
    public var filter: String
    public var code: UInt8

    public init(filter: String, code: UInt8) {
        self.filter = filter
        self.code = code
    }

    public var description: String {
        "the broker refused the subscription to \(filter) (SUBACK return code 0x\(String(code, radix: 16, uppercase: true)): failure)"
    }
}

/// Where an `MQTTInboundConnection` stands: whether it is connected with every filter answered,
/// and which filters the broker refused (asked again under the retry policy, and cleared once
/// granted).
public struct MQTTInboundStatus: Sendable, Equatable {
    /// Connected, and every filter answered once.
    public var connected = false
    public var refused: [MQTTRefusal] = []

    public init(connected: Bool = false, refused: [MQTTRefusal] = []) {
        self.connected = connected
        self.refused = refused
    }

    /// Connected with every subscription in place.
    public var isSubscribed: Bool { connected && refused.isEmpty }

    /// Why the connection is not subscribed, in a line (nil: it is): the refusals, or the lost connection.
    public var problem: String? {
        if !refused.isEmpty { return refused.map(\.description).joined(separator: "; ") }
        return connected ? nil : "not connected to the broker"
    }
}
