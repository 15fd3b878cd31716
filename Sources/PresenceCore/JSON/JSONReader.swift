#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A forward-only reader over one UTF-8 JSON document, for payloads that arrive by the thousand per
/// second. It reads just the shapes the wire formats need and skips the rest, validating everything
/// it passes over; nesting deeper than `maximumDepth` is refused rather than followed.
public struct JSONReader {
    private let bytes: UnsafeRawBufferPointer
    private(set) var position = 0
    private let maximumDepth: Int

    /// A reader over `bytes`, which must stay valid while the reader is used.
    public init(_ bytes: UnsafeRawBufferPointer, maximumDepth: Int = 32) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// Where reading failed, as a byte offset with a short reason.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        public let offset: Int
        public let reason: String
        public var description: String { "\(reason) at byte \(offset)" }
    }

    /// The kinds of value the next token starts.
    public enum Kind: Equatable, Sendable {
        case object, array, string, number, bool, null
    }

    private func fail(_ reason: String) -> Failure { Failure(offset: position, reason: reason) }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    /// The kind of the next value, after whitespace.
    public mutating func peekKind() throws(Failure) -> Kind {
        skipWhitespace()
        guard position < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0") ... UInt8(ascii: "9"): return .number
        default: throw fail("unexpected character")
        }
    }

    /// Checks that nothing but whitespace follows the document.
    public mutating func expectEnd() throws(Failure) {
        skipWhitespace()
        guard position == bytes.count else { throw fail("data after the JSON value") }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(Failure) {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { throw fail("expected \(what)") }
        position += 1
    }

    private mutating func consumeIf(_ byte: UInt8) -> Bool {
        skipWhitespace()
        if position < bytes.count, bytes[position] == byte {
            position += 1
            return true
        }
        return false
    }

    /// Runs `body` as an attempt: when it returns nil or throws, the reader goes back to where it
    /// was, as if nothing had been read. For fast paths over an expected layout that fall back to
    /// general reading.
    public mutating func attempt<T>(_ body: (inout JSONReader) throws(Failure) -> T?) -> T? {
        let start = position
        do throws(Failure) {
            if let value = try body(&self) { return value }
        } catch {}
        position = start
        return nil
    }

    /// Consumes `literal` (punctuation, a key, a keyword) if it comes next after whitespace.
    public mutating func consume(_ literal: StaticString) -> Bool {
        (try? consumeLiteral(literal)) ?? false
    }

    // MARK: Objects and arrays

    /// Reads an object, calling `member` with each key (as raw bytes, escapes undone) while the reader
    /// stands on the member's value; `member` must read or skip that value.
    public mutating func readObject(
        _ member: (inout JSONReader, JSONKey) throws(Failure) -> Void
    ) throws(Failure) {
        try expect(UInt8(ascii: "{"), "'{'")
        if consumeIf(UInt8(ascii: "}")) { return }
        repeat {
            let key = try readKey()
            try expect(UInt8(ascii: ":"), "':'")
            try member(&self, key)
        } while consumeIf(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"), "',' or '}'")
    }

    /// Reads an array, calling `element` while the reader stands on each element.
    public mutating func readArray(_ element: (inout JSONReader) throws(Failure) -> Void) throws(Failure) {
        try expect(UInt8(ascii: "["), "'['")
        if consumeIf(UInt8(ascii: "]")) { return }
        repeat {
            try element(&self)
        } while consumeIf(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"), "',' or ']'")
    }

    private mutating func readKey() throws(Failure) -> JSONKey {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw fail("expected a key") }
        let start = position + 1
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                position = index + 1
                return JSONKey(bytes: UnsafeRawBufferPointer(rebasing: bytes[start ..< index]))
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            index += 1
        }
        return JSONKey(decoded: try readString())
    }

    // MARK: Scalars

    /// Reads a string without copying it when it holds no escapes: its bytes' range in the
    /// document (valid UTF-8), else the decoded text.
    public mutating func readStringSpan() throws(Failure) -> TextSpan {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw fail("expected a string") }
        let start = position + 1
        var index = Self.plainASCIIEnd(bytes, from: start)
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                if !ascii {
                    guard String(validating: UnsafeRawBufferPointer(rebasing: bytes[start ..< index]).bindMemory(to: UInt8.self), as: UTF8.self) != nil else {
                        throw Failure(offset: start, reason: "invalid UTF-8 in a string")
                    }
                }
                position = index + 1
                return .bytes(start ..< index)
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            ascii = ascii && byte < 0x80
            index += 1
        }
        return .text(try readString())
    }

    /// The end of the run of plain ASCII string bytes from `start` (none of `"`, `\`, a control
    /// character or a byte of 0x80 or more), found eight bytes at a time; it may stop short of the
    /// run's end (the caller reads on byte by byte), never beyond it.
    static func plainASCIIEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var index = start
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let quotes = word ^ (ones &* 0x22)
            let backslashes = word ^ (ones &* 0x5C)
            // A byte is zero in `quotes` or `backslashes`, below 0x20, or 0x80 or more: the
            // classic has-zero and has-less tests, exact for any byte when no byte has its top bit.
            let special = ((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes) | ((word &- ones &* 0x20) & ~word) | word
            if special & highs != 0 { return index }
            index += 8
        }
        return index
    }

    /// Reads a string, undoing escapes; invalid UTF-8 is refused.
    public mutating func readString() throws(Failure) -> String {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw fail("expected a string") }
        position += 1
        let start = position
        var plain = true
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                if plain {
                    let raw = UnsafeRawBufferPointer(rebasing: bytes[start ..< position])
                    position += 1
                    guard let text = String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self) else {
                        throw Failure(offset: start, reason: "invalid UTF-8 in a string")
                    }
                    return text
                }
                break
            }
            if byte < 0x20 { throw fail("control character in a string") }
            if byte == UInt8(ascii: "\\") {
                plain = false
                position += 2
            } else {
                position += 1
            }
        }
        guard !plain else { throw fail("unterminated string") }
        position = start
        return try readEscapedString()
    }

    private mutating func readEscapedString() throws(Failure) -> String {
        var utf8: [UInt8] = []
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: utf8, as: UTF8.self) else { throw fail("invalid UTF-8 in a string") }
                return text
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { throw fail("unterminated escape") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): utf8.append(0x22)
                case UInt8(ascii: "\\"): utf8.append(0x5C)
                case UInt8(ascii: "/"): utf8.append(0x2F)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape(to: &utf8)
                default: throw fail("invalid escape")
                }
            default:
                if byte < 0x20 { throw fail("control character in a string") }
                utf8.append(byte)
            }
        }
        throw fail("unterminated string")
    }

    private mutating func readHex4() throws(Failure) -> UInt32 {
        guard position + 4 <= bytes.count else { throw fail("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0 ..< 4 {
            let byte = bytes[position]
            position += 1
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0") ... UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a") ... UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A") ... UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("bad hex digit in \\u escape")
            }
            value = value << 4 | digit
        }
        return value
    }

    private mutating func appendUnicodeEscape(to utf8: inout [UInt8]) throws(Failure) {
        var scalar = try readHex4()
        if (0xD800 ..< 0xDC00).contains(scalar) {
            guard position + 2 <= bytes.count, bytes[position] == UInt8(ascii: "\\"),
                  bytes[position + 1] == UInt8(ascii: "u") else { throw fail("lone surrogate") }
            position += 2
            let low = try readHex4()
            guard (0xDC00 ..< 0xE000).contains(low) else { throw fail("lone surrogate") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00 ..< 0xE000).contains(scalar) {
            throw fail("lone surrogate")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
        utf8.append(contentsOf: String(Character(unicode)).utf8)
    }

    /// Reads a number that must be an integer (no fraction, no exponent) within Int64.
    /// Returns nil (having consumed the number) when it is a valid number but not such an integer.
    public mutating func readInteger() throws(Failure) -> Int64? {
        skipWhitespace()
        let start = position
        var negative = false
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        let first = position
        var magnitude: UInt64 = 0
        while position < bytes.count, case let digit = bytes[position] &- UInt8(ascii: "0"), digit < 10 {
            magnitude = magnitude &* 10 &+ UInt64(digit)
            position += 1
        }
        let digits = position - first
        // Up to 19 digits cannot overflow 64 bits; a longer number is added up again, checked.
        var overflow = false
        if digits >= 20 {
            magnitude = 0
            for index in first ..< position {
                let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (plus, o2) = times.addingReportingOverflow(UInt64(bytes[index] &- UInt8(ascii: "0")))
                overflow = overflow || o1 || o2
                magnitude = plus
            }
        }
        guard digits > 0 else { throw Failure(offset: start, reason: "expected a number") }
        if digits > 1, bytes[start + (negative ? 1 : 0)] == UInt8(ascii: "0") {
            throw Failure(offset: start, reason: "leading zero in a number")
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") || bytes[position] | 0x20 == UInt8(ascii: "e") {
            position = start
            _ = try readDouble()
            return nil
        }
        if overflow { return nil }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }

    /// Reads any JSON number as a Double.
    public mutating func readDouble() throws(Failure) -> Double {
        let start = try scanNumber()
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start ..< position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw Failure(offset: start, reason: "number out of range") }
        return value
    }

    /// Passes over a number, checking its grammar (not its range); returns where it starts.
    private mutating func scanNumber() throws(Failure) -> Int {
        skipWhitespace()
        let start = position
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        let intStart = position
        try skipDigits()
        if position - intStart > 1, bytes[intStart] == UInt8(ascii: "0") {
            throw Failure(offset: start, reason: "leading zero in a number")
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            try skipDigits()
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            try skipDigits()
        }
        return start
    }

    private mutating func skipDigits() throws(Failure) {
        let start = position
        while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
            position += 1
        }
        guard position > start else { throw fail("expected a digit") }
    }

    /// Reads `true` or `false`.
    public mutating func readBool() throws(Failure) -> Bool {
        if try consumeLiteral("true") { return true }
        if try consumeLiteral("false") { return false }
        throw fail("expected true or false")
    }

    /// Reads `null` if it comes next; returns whether it did.
    public mutating func readNull() throws(Failure) -> Bool {
        try consumeLiteral("null")
    }

    private mutating func consumeLiteral(_ literal: StaticString) throws(Failure) -> Bool {
        skipWhitespace()
        let count = literal.utf8CodeUnitCount
        guard count <= bytes.count - position, let base = bytes.baseAddress else { return count == 0 }
        // One comparison of the bytes (a scanner's sighting is read by six literals).
        guard memcmp(base + position, literal.utf8Start, count) == 0 else { return false }
        position += count
        return true
    }

    /// Skips one value of any kind, validating it.
    public mutating func skipValue() throws(Failure) {
        try skipValue(depth: 0)
    }

    /// Skips one value like `skipValue()`, also taking the bare `nan`, `-nan`, `inf` and `-inf`
    /// that some firmwares print for a float that is not a number (ESPresense's distances): not
    /// JSON, but what those nodes publish.
    public mutating func skipValueAllowingNonFinite() throws(Failure) {
        skipWhitespace()
        // Looked for only where one can start (`n`, `i`, or `-` before either): most values skipped
        // are numbers and strings, read by the ten thousand a second.
        let next = position + 1 < bytes.count ? bytes[position + 1] : 0
        if position < bytes.count, case let first = bytes[position],
           first == UInt8(ascii: "n") || first == UInt8(ascii: "i") || (first == UInt8(ascii: "-") && (next == UInt8(ascii: "n") || next == UInt8(ascii: "i"))) {
            for literal: StaticString in ["nan", "-nan", "inf", "-inf"] where consume(literal) { return }
        }
        try skipValue(depth: 0)
    }

    private mutating func skipValue(depth: Int) throws(Failure) {
        guard depth < maximumDepth else { throw fail("nesting deeper than \(maximumDepth)") }
        switch try peekKind() {
        case .object: try readObject { (reader: inout JSONReader, _: JSONKey) throws(Failure) in try reader.skipValue(depth: depth + 1) }
        case .array: try readArray { (reader: inout JSONReader) throws(Failure) in try reader.skipValue(depth: depth + 1) }
        case .string: _ = try readStringSpan()
        case .number: _ = try scanNumber()
        case .bool: _ = try readBool()
        case .null: _ = try readNull()
        }
    }
}

/// A member name of an object being read; compare it with a literal without allocating. It points
/// into the document and is valid only during the `readObject` callback that received it.
public struct JSONKey {
    private let raw: UnsafeRawBufferPointer?
    private let decoded: String?

    init(bytes: UnsafeRawBufferPointer) {
        raw = bytes
        decoded = nil
    }

    init(decoded: String) {
        raw = nil
        self.decoded = decoded
    }

    /// Its length in UTF-8 bytes: to tell keys apart by it before comparing them.
    public var count: Int {
        raw?.count ?? decoded?.utf8.count ?? 0
    }

    /// Whether the key is exactly `name`.
    public func `is`(_ name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        if let raw {
            guard raw.count == count else { return false }
            let start = name.utf8Start
            for index in 0 ..< count where raw[index] != start[index] { return false }
            return true
        }
        return decoded.map { $0.utf8.elementsEqual(UnsafeBufferPointer(start: name.utf8Start, count: count)) } ?? false
    }
}

/// A string of a document being read: where its bytes are (when it needs no unescaping), or its text.
public enum TextSpan: Sendable, Equatable {
    case bytes(Range<Int>)
    case text(String)

    /// The string, given the document it came from.
    public func string(in document: UnsafeRawBufferPointer) -> String {
        switch self {
        case .bytes(let range): String(decoding: UnsafeRawBufferPointer(rebasing: document[range]), as: UTF8.self)
        case .text(let text): text
        }
    }

    /// Its length in UTF-8 bytes.
    public func utf8Count(in document: UnsafeRawBufferPointer) -> Int {
        switch self {
        case .bytes(let range): range.count
        case .text(let text): text.utf8.count
        }
    }
}
