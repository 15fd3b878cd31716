/// An AltBeacon frame (AltBeacon spec v1.0): manufacturer data with any company ID, the beacon code
/// `BE AC`, a 20-byte beacon ID, the reference RSSI at 1 m and a reserved byte.
public struct AltBeacon: Hashable, Sendable {
    /// The company ID, as the manufacturer data's first two bytes (little-endian) give it.
    public var manufacturer: UInt16
    /// The first 16 bytes of the beacon ID, shown as a UUID.
    public var id1: UInt128
    /// Bytes 16–17 of the beacon ID.
    public var id2: UInt16
    /// Bytes 18–19 of the beacon ID.
    public var id3: UInt16
    /// The average RSSI at 1 m, dBm.
    public var referenceRSSI: Int8
    /// The manufacturer-reserved byte; nil when the frame stops before it.
    public var reserved: UInt8?

    public init(manufacturer: UInt16, id1: UInt128, id2: UInt16, id3: UInt16, referenceRSSI: Int8, reserved: UInt8?) {
        self.manufacturer = manufacturer
        self.id1 = id1
        self.id2 = id2
        self.id3 = id3
        self.referenceRSSI = referenceRSSI
        self.reserved = reserved
    }

    /// The first 16 bytes of the beacon ID as lower-case hyphenated text.
    public var id1Text: String {
        var text = ASCIIText()
        text.appendUUID(id1)
        return text.string
    }

    /// Reads manufacturer data (company ID first) with `BE AC` at offsets 2–3 and at least the ID and
    /// reference RSSI (25 bytes); the reserved byte is optional, as android-beacon-library reads it.
    init?(manufacturerData span: Span<UInt8>) {
        guard span.count >= 25, span[2] == 0xBE, span[3] == 0xAC else { return nil }
        manufacturer = span.uint16LittleEndian(at: 0)
        id1 = span.uint128BigEndian(at: 4)
        id2 = span.uint16BigEndian(at: 20)
        id3 = span.uint16BigEndian(at: 22)
        referenceRSSI = Int8(bitPattern: span[24])
        reserved = span.count > 25 ? span[25] : nil
    }
}
