import NIOCore

/// A complete MQTT 3.1.1 packet as a broker sends it: its first byte (type and flags) and its body,
/// a slice of what the socket gave (no copy).
struct MQTTPacket {
    var header: UInt8
    var body: ByteBuffer

    var type: UInt8 { header >> 4 }

    /// A received PUBLISH: its topic (valid UTF-8) and payload, where they lie in the packet, and
    /// its QoS and packet id (which a QoS 1 message must be acknowledged with).
    struct Publish {
        var topic: ByteBuffer
        var payload: ByteBuffer
        var qos: UInt8
        var id: UInt16?
    }

    /// This PUBLISH packet's parts.
    func publish() throws(MQTTPacketDecoder.Failure) -> Publish {
        var body = body
        let qos = (header >> 1) & 0x03
        guard qos < 3, let topicLength = body.readInteger(as: UInt16.self), let topic = body.readSlice(length: Int(topicLength)) else {
            throw .malformedPublish
        }
        // Most topics are ASCII, checked without making a String of them.
        let valid = topic.withUnsafeReadableBytes { bytes in
            bytes.allSatisfy { $0 < 0x80 } || String(validating: bytes, as: UTF8.self) != nil
        }
        guard valid else { throw .malformedPublish }
        var id: UInt16?
        if qos > 0 {
            guard let packetID = body.readInteger(as: UInt16.self) else { throw .malformedPublish }
            id = packetID
        }
        return Publish(topic: topic, payload: body, qos: qos, id: id)
    }
}

/// The packets of an MQTT 3.1.1 byte stream, cut out however the socket split it: swift-nio hands
/// it what was read, and every complete packet is handed out whole. A packet longer than
/// `maximumLength` or a malformed remaining length is an error (the connection is dropped).
struct MQTTPacketDecoder: NIOSingleStepByteToMessageDecoder {
    typealias InboundOut = MQTTPacket

    /// Why the stream cannot go on.
    enum Failure: Error, Equatable, CustomStringConvertible {
        case malformedLength
        case tooLong(Int)
        case malformedPublish

        var description: String {
            switch self {
            case .malformedLength: "a packet's remaining length is malformed"
            case .tooLong(let length): "a packet of \(length) bytes is longer than allowed"
            case .malformedPublish: "a PUBLISH packet is malformed"
            }
        }
    }

    let maximumLength: Int

    init(maximumLength: Int = 1 << 20) {
        self.maximumLength = maximumLength
    }

    mutating func decode(buffer: inout ByteBuffer) throws -> MQTTPacket? {
        guard let header = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return nil }
        var index = buffer.readerIndex + 1
        var length = 0
        var multiplier = 1
        while true {
            guard let byte = buffer.getInteger(at: index, as: UInt8.self) else { return nil }
            length += Int(byte & 0x7F) * multiplier
            index += 1
            if byte & 0x80 == 0 { break }
            multiplier *= 128
            guard multiplier <= 128 * 128 * 128 else { throw Failure.malformedLength }
        }
        guard length <= maximumLength else { throw Failure.tooLong(length) }
        guard let body = buffer.getSlice(at: index, length: length) else { return nil }
        buffer.moveReaderIndex(to: index + length)
        return MQTTPacket(header: header, body: body)
    }

    mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> MQTTPacket? {
        try decode(buffer: &buffer)
    }
}
