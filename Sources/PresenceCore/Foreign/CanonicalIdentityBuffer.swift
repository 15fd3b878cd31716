/// A canonical identity (`Identity`'s text) spelled into reused bytes from what a foreign node
/// wrote, so that a message per sighting costs no allocation: the matcher looks the bytes up
/// where they lie. Every `append…` checks its input and returns false (leaving the bytes
/// unspecified) when it is not of the expected form.
public struct CanonicalIdentityBuffer: Sendable {
    public private(set) var bytes: [UInt8] = []

    /// Empty, without storage until the first identity.
    public init() {}

    /// Empties the buffer, keeping its storage.
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// The identity as text (tests, logs).
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func append(_ literal: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// A UUID written as 32 hex digits, with or without the dashes of 8-4-4-4-12, in either case.
    public mutating func appendUUID(_ text: UnsafeRawBufferPointer) -> Bool {
        let dashed = text.count == 36
        guard text.count == 32 || dashed else { return false }
        return fill(36, separator: UInt8(ascii: "-")) { out in
            var written = 0
            for (index, byte) in text.enumerated() {
                if dashed, index == 8 || index == 13 || index == 18 || index == 23 {
                    guard byte == UInt8(ascii: "-") else { return false }
                    continue
                }
                guard let nibble = Self.nibble(byte) else { return false }
                // The dashes are in place already.
                if written == 8 || written == 13 || written == 18 || written == 23 { written += 1 }
                out[written] = Self.hexDigit(nibble)
                written += 1
            }
            return true
        }
    }

    /// Exactly `count` hex digits, written in lower case.
    public mutating func appendHex(_ text: UnsafeRawBufferPointer, count: Int) -> Bool {
        guard text.count == count else { return false }
        for byte in text {
            guard let nibble = Self.nibble(byte) else { return false }
            bytes.append(Self.hexDigit(nibble))
        }
        return true
    }

    /// Byte values as lower-case hex, `separator` between them when given.
    public mutating func appendHex(values: some Sequence<UInt8>, separator: UInt8? = nil) {
        var first = true
        for value in values {
            if !first, let separator { bytes.append(separator) }
            first = false
            bytes.append(Self.hexDigit(value >> 4))
            bytes.append(Self.hexDigit(value & 0x0F))
        }
    }

    /// A Bluetooth address written as `AA:BB:CC:DD:EE:FF`, with `-` between the bytes, or as 12 hex
    /// digits, in either case: appended as `aa:bb:cc:dd:ee:ff`.
    public mutating func appendAddress(_ text: UnsafeRawBufferPointer) -> Bool {
        let separated = text.count == 17
        guard text.count == 12 || separated else { return false }
        return fill(17, separator: UInt8(ascii: ":")) { out in
            var written = 0
            for (index, byte) in text.enumerated() {
                if separated, index % 3 == 2 {
                    guard byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-") else { return false }
                    continue
                }
                guard let nibble = Self.nibble(byte) else { return false }
                // The colons are in place already.
                if written % 3 == 2 { written += 1 }
                out[written] = Self.hexDigit(nibble)
                written += 1
            }
            return true
        }
    }

    /// Appends `count` bytes of `separator`, then lets `body` write over them in place (its
    /// result is returned): one growth of the buffer for a whole UUID or address, not one per digit.
    private mutating func fill(_ count: Int, separator: UInt8, _ body: (UnsafeMutableBufferPointer<UInt8>) -> Bool) -> Bool {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(separator, count: count))
        return bytes.withUnsafeMutableBufferPointer { body(UnsafeMutableBufferPointer(rebasing: $0[start...])) }
    }

    /// A whole number from 0 to 65,535 written in decimal (leading zeros allowed): appended without them.
    public mutating func appendUInt16(_ text: UnsafeRawBufferPointer) -> Bool {
        guard (1 ... 5).contains(text.count) else { return false }
        var value = 0
        for byte in text {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return false }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        guard value <= 65_535 else { return false }
        appendDecimal(UInt16(value))
        return true
    }

    /// A number in decimal, without leading zeros.
    public mutating func appendDecimal(_ value: UInt16) {
        var divisor: UInt16 = 10_000
        var started = false
        while divisor > 0 {
            let digit = value / divisor % 10
            if digit > 0 || started || divisor == 1 {
                bytes.append(UInt8(ascii: "0") + UInt8(digit))
                started = true
            }
            divisor /= 10
        }
    }

    /// Bytes already in canonical form, as they are.
    public mutating func appendVerbatim(_ text: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: text)
    }

    /// Changes the byte at `index` (a separator of bytes appended verbatim).
    public mutating func replace(at index: Int, with byte: UInt8) {
        bytes[index] = byte
    }

    /// A foreign id kept as written, when `Identity.isForeignID` takes it.
    public mutating func appendForeignID(_ text: UnsafeRawBufferPointer) -> Bool {
        guard Identity.isForeignID(text) else { return false }
        bytes.append(contentsOf: text)
        return true
    }

    /// The value of a hex digit, or nil.
    static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0") ... UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a") ... UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A") ... UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The lower-case hex digit of a value from 0 to 15 (computed: a table would be a global,
    /// looked up through its lazy initialisation at every digit).
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") - 10 + value
    }
}
