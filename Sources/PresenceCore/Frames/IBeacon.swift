/// An Apple iBeacon frame: manufacturer data `4C 00 02 15`, a 16-byte proximity UUID, major, minor
/// (big-endian) and the measured power at 1 m.
public struct IBeacon: Hashable, Sendable {
    /// The proximity UUID, big-endian as sent.
    public var uuid: UInt128
    public var major: UInt16
    public var minor: UInt16
    /// The calibrated RSSI at 1 m, dBm, as the frame states it (0 means not calibrated).
    public var measuredPower: Int8

    public init(uuid: UInt128, major: UInt16, minor: UInt16, measuredPower: Int8) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    /// The UUID as lower-case hyphenated text.
    public var uuidText: String {
        var text = ASCIIText()
        text.appendUUID(uuid)
        return text.string
    }

    /// Reads manufacturer data (company ID first) that starts `4C 00 02 15` and holds all 25 bytes.
    init?(manufacturerData span: Span<UInt8>) {
        guard span.count >= 25,
              span[0] == 0x4C, span[1] == 0x00, span[2] == 0x02, span[3] == 0x15
        else { return nil }
        uuid = span.uint128BigEndian(at: 4)
        major = span.uint16BigEndian(at: 20)
        minor = span.uint16BigEndian(at: 22)
        measuredPower = Int8(bitPattern: span[24])
    }
}
