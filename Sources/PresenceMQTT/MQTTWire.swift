/// The MQTT 3.1.1 packets an inbound connection writes (`MQTTInboundConnection`), as bytes.
enum MQTTWire {
    /// CONNECT with `keepAlive` seconds, a clean or a kept session, and the user name and password
    /// when given. MQTT 3.1.1 allows a password only with a user name: `MQTTInboundConnection`
    /// refuses one without, and none is written here without it.
    static func connect(clientID: String, username: String?, password: String?, keepAlive: UInt16, cleanSession: Bool = true) -> [UInt8] {
        var body: [UInt8] = []
        appendString("MQTT", to: &body)
        body.append(4)
        var flags: UInt8 = cleanSession ? 0x02 : 0
        if username != nil { flags |= 0x80 }
        if username != nil, password != nil { flags |= 0x40 }
        body.append(flags)
        body += [UInt8(keepAlive >> 8), UInt8(keepAlive & 0xFF)]
        appendString(clientID, to: &body)
        if let username {
            appendString(username, to: &body)
            if let password { appendString(password, to: &body) }
        }
        return packet(0x10, body)
    }

    /// SUBSCRIBE to `subscriptions`, each at its QoS (0 or 1), as packet `id`.
    static func subscribe(_ subscriptions: [MQTTSubscription], id: UInt16) -> [UInt8] {
        var body: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xFF)]
        for subscription in subscriptions {
            appendString(subscription.filter, to: &body)
            body.append(UInt8(clamping: min(max(subscription.qos, 0), 1)))
        }
        return packet(0x82, body)
    }

    /// A PUBACK for a QoS 1 message's `id`.
    static func publishAcknowledgement(_ id: UInt16) -> [UInt8] {
        [0x40, 2, UInt8(id >> 8), UInt8(id & 0xFF)]
    }

    static let pingRequest: [UInt8] = [0xC0, 0]
    static let disconnect: [UInt8] = [0xE0, 0]

    /// A packet of `type` (with its flags) around `body`, its remaining length encoded in front.
    static func packet(_ type: UInt8, _ body: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [type]
        var length = body.count
        repeat {
            var byte = UInt8(length % 128)
            length /= 128
            if length > 0 { byte |= 0x80 }
            bytes.append(byte)
        } while length > 0
        return bytes + body
    }

    private static func appendString(_ text: String, to bytes: inout [UInt8]) {
        let utf8 = Array(text.utf8.prefix(65_535))
        bytes += [UInt8(utf8.count >> 8), UInt8(utf8.count & 0xFF)]
        bytes += utf8
    }
}
