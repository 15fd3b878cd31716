/// A short ASCII text assembled in place, without intermediate strings: canonical identities and
/// addresses are built here once per distinct advertiser. Holds at most 64 bytes.
struct ASCIIText {
    private var storage = InlineArray<64, UInt8>(repeating: 0)
    private(set) var count = 0

    private static let hexDigits: InlineArray<16, UInt8> = [
        0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66,
    ]

    mutating func append(_ byte: UInt8) {
        storage[count] = byte
        count += 1
    }

    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { buffer in
            for byte in buffer { append(byte) }
        }
    }

    /// Appends the low `digits` hex digits of `value`, most significant first, lower case.
    mutating func appendHex(_ value: UInt128, digits: Int) {
        for position in (0 ..< digits).reversed() {
            append(ASCIIText.hexDigits[Int(truncatingIfNeeded: value >> (4 * position)) & 0xF])
        }
    }

    /// Appends a 128-bit value as a hyphenated UUID, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    mutating func appendUUID(_ value: UInt128) {
        appendHex(value >> 96, digits: 8)
        append(0x2D)
        appendHex(value >> 80, digits: 4)
        append(0x2D)
        appendHex(value >> 64, digits: 4)
        append(0x2D)
        appendHex(value >> 48, digits: 4)
        append(0x2D)
        appendHex(value, digits: 12)
    }

    /// Appends a number in decimal, without leading zeros.
    mutating func appendDecimal(_ value: UInt16) {
        var divisor: UInt16 = 10000
        var started = false
        while divisor > 0 {
            let digit = value / divisor % 10
            if digit != 0 || started || divisor == 1 {
                append(0x30 + UInt8(digit))
                started = true
            }
            divisor /= 10
        }
    }

    /// Appends an address as `aa:bb:cc:dd:ee:ff`.
    mutating func append(_ address: BluetoothAddress) {
        for position in (0 ..< 6).reversed() {
            appendHex(UInt128(address.rawValue >> (8 * position)), digits: 2)
            if position > 0 { append(0x3A) }
        }
    }

    var string: String {
        storage.span.withUnsafeBufferPointer { buffer in
            String(decoding: buffer.prefix(count), as: UTF8.self)
        }
    }
}
