import NIOCore
import Testing
@testable import PresenceMQTT

/// The packets an inbound connection writes, and the reading of what a broker sends, however the
/// socket splits it.
@Suite struct MQTTWireTests {
    @Test func connectAndSubscribeAreWrittenAsTheStandardSaysByte() {
        // CONNECT: "MQTT", level 4, flags user+password+clean session, keep-alive 30, then the strings.
        let connect = MQTTWire.connect(clientID: "c", username: "u", password: "p", keepAlive: 30)
        #expect(connect == [0x10, 19, 0, 4, 0x4D, 0x51, 0x54, 0x54, 4, 0xC2, 0, 30, 0, 1, 0x63, 0, 1, 0x75, 0, 1, 0x70])
        #expect(MQTTWire.connect(clientID: "c", username: nil, password: nil, keepAlive: 5)[9] == 0x02)
        #expect(MQTTWire.connect(clientID: "c", username: "u", password: nil, keepAlive: 5, cleanSession: false)[9] == 0x80)
        #expect(MQTTWire.subscribe([MQTTSubscription("a/+", qos: 0), MQTTSubscription("b", qos: 1)], id: 1)
            == [0x82, 12, 0, 1, 0, 3, 0x61, 0x2F, 0x2B, 0, 0, 1, 0x62, 1])
        #expect(MQTTWire.publishAcknowledgement(0x0102) == [0x40, 2, 1, 2])
    }

    @Test func aPasswordWithoutAUserNameIsNeverWritten() {
        // MQTT 3.1.1 (3.1.2.9): the password flag needs the user name flag.
        let connect = MQTTWire.connect(clientID: "c", username: nil, password: "p", keepAlive: 5)
        #expect(connect[9] == 0x02)
        #expect(connect == MQTTWire.connect(clientID: "c", username: nil, password: nil, keepAlive: 5))
    }

    /// Every packet `parts` hold, fed to the decoder one part at a time.
    static func decode(_ parts: [[UInt8]], maximumLength: Int = 1 << 20) throws -> [MQTTPacket] {
        let processor = NIOSingleStepByteToMessageProcessor(MQTTPacketDecoder(maximumLength: maximumLength))
        var packets: [MQTTPacket] = []
        for part in parts {
            try processor.process(buffer: ByteBuffer(bytes: part)) { packets.append($0) }
        }
        return packets
    }

    @Test(arguments: [(0, [UInt8(0)]), (127, [0x7F]), (128, [0x80, 0x01]), (16_383, [0xFF, 0x7F]), (16_384, [0x80, 0x80, 0x01])])
    func remainingLengthsAreEncodedSevenBitsAtATime(length: Int, encoded: [UInt8]) throws {
        let packet = MQTTWire.packet(0x30, Array(repeating: 7, count: length))
        #expect(Array(packet[1 ..< 1 + encoded.count]) == encoded)
        let read = try Self.decode([packet])
        #expect(read.count == 1 && read.first?.header == 0x30 && read.first?.body.readableBytes == length)
    }

    /// A PUBLISH as a broker writes it: QoS in the header's flags, the topic, a packet id at QoS 1.
    static func publish(topic: String, payload: [UInt8], id: UInt16? = nil) -> [UInt8] {
        var body = [UInt8(topic.utf8.count >> 8), UInt8(topic.utf8.count & 0xFF)] + Array(topic.utf8)
        if let id { body += [UInt8(id >> 8), UInt8(id & 0xFF)] }
        return MQTTWire.packet(id == nil ? 0x30 : 0x32, body + payload)
    }

    @Test func packetsSplitAtEveryByteAreReadWhole() throws {
        let wire = Self.publish(topic: "espresense/devices/x/hall", payload: Array(#"{"rssi":-60}"#.utf8))
            + [0xD0, 0] + Self.publish(topic: "t", payload: Array(repeating: 0xAB, count: 300), id: 0x0102)
        for cut in 1 ..< wire.count {
            let packets = try Self.decode([Array(wire[..<cut]), Array(wire[cut...])])
            #expect(packets.map(\.type) == [3, 13, 3], "cut at \(cut)")
            guard packets.count == 3 else { continue }
            let first = try packets[0].publish()
            #expect(Array(first.topic.readableBytesView) == Array("espresense/devices/x/hall".utf8))
            #expect(Array(first.payload.readableBytesView) == Array(#"{"rssi":-60}"#.utf8))
            #expect(first.qos == 0 && first.id == nil)
            let last = try packets[2].publish()
            #expect(Array(last.topic.readableBytesView) == Array("t".utf8) && last.payload.readableBytes == 300 && last.qos == 1 && last.id == 0x0102)
        }
        // One byte at a time.
        #expect(try Self.decode(wire.map { [$0] }).map(\.type) == [3, 13, 3])
    }

    @Test func hostileStreamsAreRefused() {
        #expect(throws: MQTTPacketDecoder.Failure.tooLong(101)) {
            try Self.decode([MQTTWire.packet(0x30, Array(repeating: 0, count: 101))], maximumLength: 100)
        }
        #expect(throws: MQTTPacketDecoder.Failure.malformedLength) { try Self.decode([[0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]]) }
        // A topic longer than the packet, topics that are not UTF-8, and a QoS 1 message without its id.
        for (header, body): (UInt8, [UInt8]) in [(0x30, [0, 9, 0x61]), (0x30, [0, 2, 0xC3, 0x28]), (0x30, [0, 3, 0x61, 0x62, 0xFF]), (0x32, [0, 1, 0x61]),
                                                 (0x36, [0, 1, 0x61, 0, 1])] {
            #expect(throws: MQTTPacketDecoder.Failure.malformedPublish) {
                try MQTTPacket(header: header, body: ByteBuffer(bytes: body)).publish()
            }
        }
    }

    @Test func aBlockHoldsItsMessagesInOrder() {
        let sent = [MQTTMessage(topic: "espresense/devices/x/hall", payload: Array(#"{"rssi":-60}"#.utf8), qos: 0),
                    MQTTMessage(topic: "home/gw/LWT", payload: [], qos: 0), MQTTMessage(topic: "t", payload: [0, 0xFF], qos: 0)]
        let block = MQTTMessageBlock(sent)
        #expect(block.count == 3 && !block.isEmpty)
        #expect(block.messages == sent)
        #expect(block.queuedSize == sent.map(\.queuedSize).reduce(0, +))
        var topics: [String] = []
        block.forEach { topic, _ in topics.append(String(decoding: topic, as: UTF8.self)) }
        #expect(topics == sent.map(\.topic))
        #expect(MQTTMessageBlock().isEmpty && MQTTMessageBlock().messages.isEmpty)
    }
}
