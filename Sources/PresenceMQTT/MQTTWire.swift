/// The MQTT 3.1.1 packets a subscribe-only connection writes (`StreamSubscriber`): CONNECT,
/// SUBSCRIBE, PINGREQ and DISCONNECT, as bytes.
enum MQTTWire {
    /// CONNECT with a clean session (nothing kept while away: these subscriptions are QoS 0),
    /// `keepAlive` seconds, and the user name and password when given.
    static func connect(clientID: String, username: String?, password: String?, keepAlive: UInt16) -> [UInt8] {
        var body: [UInt8] = []
        appendString("MQTT", to: &body)
        body.append(4)
        var flags: UInt8 = 0x02
        if username != nil { flags |= 0x80 }
        if password != nil { flags |= 0x40 }
        body.append(flags)
        body += [UInt8(keepAlive >> 8), UInt8(keepAlive & 0xFF)]
        appendString(clientID, to: &body)
        if let username { appendString(username, to: &body) }
        if let password { appendString(password, to: &body) }
        return packet(0x10, body)
    }

    /// SUBSCRIBE to `filters`, each at QoS 0, as packet `id`.
    static func subscribe(_ filters: [String], id: UInt16) -> [UInt8] {
        var body: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xFF)]
        for filter in filters {
            appendString(filter, to: &body)
            body.append(0)
        }
        return packet(0x82, body)
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

/// The packets an MQTT 3.1.1 broker sends, cut out of what the socket gave however it was split:
/// bytes are appended as they come, and every complete packet is handed out whole. A packet longer
/// than `maximumLength` or a malformed remaining length is an error (the connection is dropped).
struct MQTTPacketStream {
    /// A complete packet: its first byte (type and flags) and its body.
    struct Packet {
        var header: UInt8
        var body: ArraySlice<UInt8>

        var type: UInt8 { header >> 4 }
    }

    /// A received PUBLISH: its topic (valid UTF-8) and payload, where they lie in the packet, and
    /// its QoS and packet id (which a QoS 1 message must be acknowledged with).
    struct Publish {
        var topic: ArraySlice<UInt8>
        var payload: ArraySlice<UInt8>
        var qos: UInt8
        var id: UInt16?
    }

    /// Why the stream cannot go on.
    enum Failure: Error, Equatable {
        case malformedLength
        case tooLong(Int)
        case malformedPublish
    }

    let maximumLength: Int
    private var buffer: [UInt8] = []
    private var start = 0

    init(maximumLength: Int = 1 << 20) {
        self.maximumLength = maximumLength
    }

    /// Takes bytes read from the socket.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if start > 0, start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 65_536 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete packet, or nil until more bytes come.
    mutating func next() throws(Failure) -> Packet? {
        var index = start + 1
        var length = 0
        var multiplier = 1
        while true {
            guard index < buffer.count else { return nil }
            let byte = buffer[index]
            length += Int(byte & 0x7F) * multiplier
            index += 1
            if byte & 0x80 == 0 { break }
            multiplier *= 128
            guard multiplier <= 128 * 128 * 128 else { throw .malformedLength }
        }
        guard length <= maximumLength else { throw .tooLong(length) }
        guard buffer.count - index >= length else { return nil }
        let packet = Packet(header: buffer[start], body: buffer[index ..< index + length])
        start = index + length
        return packet
    }

    /// A PUBLISH packet's parts.
    static func publish(_ packet: Packet) throws(Failure) -> Publish {
        let body = packet.body
        let qos = (packet.header >> 1) & 0x03
        guard body.count >= 2, qos < 3 else { throw .malformedPublish }
        let topicLength = Int(body[body.startIndex]) << 8 | Int(body[body.startIndex + 1])
        var index = body.startIndex + 2
        guard body.endIndex - index >= topicLength + (qos > 0 ? 2 : 0) else { throw .malformedPublish }
        let topic = body[index ..< index + topicLength]
        // Most topics are ASCII, checked without making a String of them.
        guard topic.allSatisfy({ $0 < 0x80 }) || String(validating: topic, as: UTF8.self) != nil else { throw .malformedPublish }
        index += topicLength
        var id: UInt16?
        if qos > 0 {
            id = UInt16(body[index]) << 8 | UInt16(body[index + 1])
            index += 2
        }
        return Publish(topic: topic, payload: body[index...], qos: qos, id: id)
    }

    /// A PUBACK for a QoS 1 message's `id`.
    static func publishAcknowledgement(_ id: UInt16) -> [UInt8] {
        [0x40, 2, UInt8(id >> 8), UInt8(id & 0xFF)]
    }
}
