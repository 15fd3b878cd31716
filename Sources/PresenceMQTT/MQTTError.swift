import CMosquitto

/// Why an MQTT operation failed: a libmosquitto return code (or a CONNACK/PUBACK reason code)
/// with a one-line message a person can act on. Never contains a password.
public struct MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The libmosquitto return code (`MOSQ_ERR_*`) or MQTT reason code, when the library gave one.
    public var code: Int32?
    /// One line: what failed and the library's own explanation.
    public var message: String

    public init(code: Int32? = nil, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String {
        if let code { return "\(message) (code \(code))" }
        return message
    }

    /// The error for a libmosquitto return code, with `mosquitto_strerror`'s text.
    init(_ what: String, rc: Int32) {
        self.init(code: rc, message: "\(what): \(cText(mosquitto_strerror(rc)))")
    }

    /// The error for a refused CONNACK, worded for the protocol version in use.
    static func connack(_ rc: Int32, version: MQTTProtocolVersion) -> MQTTError {
        let reason = version == .v5 ? mosquitto_reason_string(rc) : mosquitto_connack_string(rc)
        return MQTTError(code: rc, message: "broker refused the connection: \(cText(reason))")
    }

    /// The error for a failed MQTT v5 PUBACK reason code (0x80 and above).
    static func puback(_ reason: Int32, topic: String) -> MQTTError {
        MQTTError(code: reason, message: "broker rejected the message on \(topic): \(cText(mosquitto_reason_string(reason)))")
    }

    /// Thrown to publishers and waiters once `stop()` has begun.
    static let stopped = MQTTError(message: "the MQTT client is stopped")
}

/// The one funnel for libmosquitto return codes: success passes, anything else throws with
/// the library's own message.
func check(_ rc: Int32, _ what: @autoclosure () -> String) throws(MQTTError) {
    guard rc == MOSQ_ERR_SUCCESS.rawValue else { throw MQTTError(what(), rc: rc) }
}

/// A static C string from libmosquitto, or a placeholder if it gave none.
func cText(_ pointer: UnsafePointer<CChar>?) -> String {
    pointer.map { String(cString: $0) } ?? "unknown reason"
}
