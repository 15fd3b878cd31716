/// Writes values in the journal's binary layout: fixed-width little-endian integers and doubles,
/// unsigned LEB128 lengths and counts, UTF-8 strings prefixed by their length, and a presence byte
/// before optional values.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init() {}

    mutating func byte(_ value: UInt8) {
        bytes.append(value)
    }

    mutating func count(_ value: Int) {
        var rest = UInt64(max(0, value))
        repeat {
            let low = UInt8(rest & 0x7F)
            rest >>= 7
            bytes.append(rest == 0 ? low : low | 0x80)
        } while rest != 0
    }

    mutating func int64(_ value: Int64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func double(_ value: Double) {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func string(_ value: String) {
        count(value.utf8.count)
        bytes.append(contentsOf: value.utf8)
    }

    /// Raw bytes prefixed by their count.
    mutating func raw(_ value: [UInt8]) {
        count(value.count)
        bytes.append(contentsOf: value)
    }

    mutating func optional<T>(_ value: T?, _ write: (inout ByteWriter, T) -> Void) {
        guard let value else {
            byte(0)
            return
        }
        byte(1)
        write(&self, value)
    }

    mutating func array<T>(_ values: [T], _ write: (inout ByteWriter, T) -> Void) {
        count(values.count)
        for value in values { write(&self, value) }
    }
}

/// Bytes that do not hold what they should: where, and what was wrong.
public struct MalformedBytes: Error, Equatable, CustomStringConvertible {
    public let offset: Int
    public let what: String

    public var description: String { "\(what) at byte \(offset)" }
}

/// Reads what `ByteWriter` wrote; anything malformed (cut short, a length past the end, a count
/// beyond what the bytes left could hold, invalid UTF-8, an unknown tag) throws, never traps.
struct ByteReader {
    typealias Malformed = MalformedBytes

    private let bytes: ArraySlice<UInt8>
    private(set) var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    var isAtEnd: Bool { position == bytes.endIndex }

    mutating func byte() throws(Malformed) -> UInt8 {
        guard position < bytes.endIndex else { throw Malformed(offset: position, what: "cut short") }
        defer { position += 1 }
        return bytes[position]
    }

    /// A count or length, at most what the rest of the bytes could hold (`unit` bytes each).
    mutating func count(unit: Int = 1) throws(Malformed) -> Int {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            guard shift < 63 else { throw Malformed(offset: position, what: "a count too long") }
            value |= UInt64(next & 0x7F) << shift
            if next & 0x80 == 0 { break }
            shift += 7
        }
        guard value <= UInt64(bytes.endIndex - position) / UInt64(max(1, unit)) else {
            throw Malformed(offset: position, what: "a count past the end")
        }
        return Int(value)
    }

    mutating func int64() throws(Malformed) -> Int64 {
        Int64(bitPattern: try fixed64())
    }

    mutating func double() throws(Malformed) -> Double {
        Double(bitPattern: try fixed64())
    }

    mutating func string() throws(Malformed) -> String {
        let length = try count()
        let start = position
        position += length
        guard let text = String(validating: bytes[start ..< position], as: UTF8.self) else {
            throw Malformed(offset: start, what: "invalid UTF-8")
        }
        return text
    }

    mutating func raw() throws(Malformed) -> [UInt8] {
        let length = try count()
        defer { position += length }
        return Array(bytes[position ..< position + length])
    }

    mutating func optional<T>(_ read: (inout ByteReader) throws(Malformed) -> T) throws(Malformed) -> T? {
        switch try byte() {
        case 0: return nil
        case 1: return try read(&self)
        default: throw Malformed(offset: position - 1, what: "a bad presence byte")
        }
    }

    mutating func array<T>(_ read: (inout ByteReader) throws(Malformed) -> T) throws(Malformed) -> [T] {
        let count = try count()
        var values: [T] = []
        values.reserveCapacity(count)
        for _ in 0 ..< count { values.append(try read(&self)) }
        return values
    }

    private mutating func fixed64() throws(Malformed) -> UInt64 {
        guard bytes.endIndex - position >= 8 else { throw Malformed(offset: position, what: "cut short") }
        var value: UInt64 = 0
        for index in 0 ..< 8 { value |= UInt64(bytes[position + index]) << (8 * UInt64(index)) }
        position += 8
        return value
    }
}
