/// Builds a compact UTF-8 JSON document member by member, escaping strings as RFC 8259 requires.
/// Used for every payload the pipeline publishes, so output is byte-for-byte reproducible.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = []

    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// Writes `{`, runs `body` to write the members, then writes `}`.
    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
        body(&self)
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    /// Writes `[`, runs `body` to write the elements, then writes `]`.
    public mutating func array(_ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma.append(false)
        body(&self)
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes a member name; the next value written is its value.
    public mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        if !needsComma.isEmpty { needsComma[needsComma.count - 1] = false }
    }

    public mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
    }

    public mutating func int(_ value: Int64) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func int(_ value: Int) { int(Int64(value)) }

    /// Writes a number rounded to `decimals` places, in its shortest form (`-61.5`, `2`).
    public mutating func number(_ value: Double, decimals: Int = 2) {
        separate()
        guard value.isFinite else {
            bytes.append(contentsOf: "null".utf8)
            return
        }
        var scale = 1.0
        for _ in 0 ..< decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if rounded == rounded.rounded(), abs(rounded) < 1e15 {
            bytes.append(contentsOf: String(Int64(rounded)).utf8)
        } else {
            bytes.append(contentsOf: String(rounded).utf8)
        }
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    /// Writes `name: value`, or nothing when `value` is nil.
    public mutating func member(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    public mutating func member(_ name: String, _ value: Int64?) {
        guard let value else { return }
        key(name)
        int(value)
    }

    public mutating func member(_ name: String, _ value: Int?) {
        guard let value else { return }
        key(name)
        int(value)
    }

    public mutating func member(_ name: String, number value: Double?, decimals: Int = 2) {
        guard let value else { return }
        key(name)
        number(value, decimals: decimals)
    }

    private mutating func separate() {
        guard let last = needsComma.last else { return }
        if last { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0 ..< 0x20:
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(JSONWriter.hex[Int(byte >> 4)])
                bytes.append(JSONWriter.hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
