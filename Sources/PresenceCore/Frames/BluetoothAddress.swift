/// A 48-bit Bluetooth device address. `rawValue` holds it in display order, most significant byte
/// first: `c4:7c:8d:6a:2b:01` is `0xC47C8D6A2B01`. HCI carries addresses least significant byte first.
public struct BluetoothAddress: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The address in its low 48 bits.
    public let rawValue: UInt64

    /// An address from its 48-bit value; higher bits are ignored.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue & 0xFFFF_FFFF_FFFF
    }

    /// Parses `aa:bb:cc:dd:ee:ff` (hex digits in either case).
    public init?(_ text: some StringProtocol) {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 6 else { return nil }
        var value: UInt64 = 0
        for field in fields {
            guard field.utf8.count == 2, let byte = UInt8(field, radix: 16) else { return nil }
            value = value << 8 | UInt64(byte)
        }
        self.init(rawValue: value)
    }

    /// Reads an address as HCI lays it out: six bytes, least significant first.
    init(hciBytes span: Span<UInt8>, at offset: Int) {
        var value: UInt64 = 0
        for index in (offset ..< offset + 6).reversed() {
            value = value << 8 | UInt64(span[index])
        }
        self.init(rawValue: value)
    }

    /// The six bytes as HCI writes them, least significant first.
    public var hciBytes: [UInt8] {
        (0 ..< 6).map { UInt8(truncatingIfNeeded: rawValue >> (8 * $0)) }
    }

    /// The first byte displayed, whose top two bits tell the kinds of random address apart.
    public var mostSignificantByte: UInt8 { UInt8(truncatingIfNeeded: rawValue >> 40) }

    /// `aa:bb:cc:dd:ee:ff`, lower case.
    public var description: String {
        var text = ASCIIText()
        text.append(self)
        return text.string
    }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool { lhs.rawValue < rhs.rawValue }
}
