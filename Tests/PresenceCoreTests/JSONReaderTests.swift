import Testing
@testable import PresenceCore

@Suite struct JSONReaderTests {
    private func read<T>(_ text: String, _ body: (inout JSONReader) throws(JSONReader.Failure) -> T) throws -> T {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBytes { raw in
            var reader = JSONReader(raw)
            let value = try body(&reader)
            try reader.expectEnd()
            return value
        }
    }

    @Test func readsStringsWithEscapesAndUnicode() throws {
        let text = try read(#""a\"b\\c\/d\n\u00e9\ud83d\ude00 é""#) { (r: inout JSONReader) throws(JSONReader.Failure) in try r.readString() }
        #expect(text == "a\"b\\c/d\né😀 é")
    }

    @Test(arguments: [
        #""unterminated"#, #""bad \x escape""#, #""lone \ud800 surrogate""#, "\"control \u{01} char\"", #""\u12""#,
    ])
    func refusesBadStrings(_ text: String) {
        #expect(throws: JSONReader.Failure.self) {
            _ = try read(text) { (r: inout JSONReader) throws(JSONReader.Failure) in try r.readString() }
        }
    }

    /// The eight-bytes-at-a-time scan stops at or before the first byte a string cannot hold
    /// plainly, within the eight bytes before it, at every position and for every kind of byte.
    @Test func thePlainASCIIScanNeverPassesASpecialByte() {
        let specials: [UInt8] = [0x22, 0x5C, 0x00, 0x01, 0x1F, 0x80, 0xC3, 0xFF]
        let plain: [UInt8] = [0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x41, 0x30]
        var random = RandomSource(seed: 3)
        for length in 0 ..< 40 {
            for special in [nil] + specials.map(Optional.some) {
                for _ in 0 ..< 8 {
                    var bytes = (0 ..< length).map { _ in plain[Int(random.uniform() * Double(plain.count)) % plain.count] }
                    if let special, length > 0 { bytes[Int(random.uniform() * Double(length)) % length] = special }
                    let first = bytes.firstIndex { specials.contains($0) } ?? length
                    let end = bytes.withUnsafeBytes { JSONReader.plainASCIIEnd($0, from: 0) }
                    #expect(end <= first && (first - end < 8 || end + 8 > length), "\(bytes): \(end), first special at \(first)")
                }
            }
        }
        let text = try? read(#""ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1""#) { (r: inout JSONReader) throws(JSONReader.Failure) in try r.readStringSpan() }
        #expect(text == .bytes(1 ..< 49))
    }

    @Test func refusesInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0xFF, 0xFE, 0x22]
        #expect(throws: JSONReader.Failure.self) {
            try bytes.withUnsafeBytes { raw in
                var reader = JSONReader(raw)
                _ = try reader.readString()
            }
        }
    }

    @Test(arguments: [("0", Int64(0)), ("-67", -67), ("1763774734123", 1_763_774_734_123), ("9223372036854775807", .max), ("-9223372036854775808", .min)])
    func readsIntegers(_ text: String, _ expected: Int64) throws {
        #expect(try read(text) { (r: inout JSONReader) throws(JSONReader.Failure) in try r.readInteger() } == expected)
    }

    @Test(arguments: ["1.5", "-3e2", "9223372036854775808", "1E+2", "-9223372036854775809", "9999999999999999999",
                      "18446744073709551616", "-99999999999999999999999", "184467440737095516150"])
    func nonIntegersReadAsNilButAreConsumed(_ text: String) throws {
        #expect(try read(text) { (r: inout JSONReader) throws(JSONReader.Failure) in try r.readInteger() } == nil)
    }

    @Test(arguments: ["01", "-", "1.", ".5", "1e", "+1", "--1"])
    func refusesMalformedNumbers(_ text: String) {
        #expect(throws: JSONReader.Failure.self) {
            _ = try read(text) { (r: inout JSONReader) throws(JSONReader.Failure) in try r.readDouble() }
        }
    }

    @Test func skipsNestedValuesAndRefusesDeepNesting() throws {
        try read(#"{"a":[1,2,{"b":null,"c":true}],"d":"x"}"#) { (r: inout JSONReader) throws(JSONReader.Failure) in try r.skipValue() }
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONReader.Failure.self) {
            try read(deep) { (r: inout JSONReader) throws(JSONReader.Failure) in try r.skipValue() }
        }
    }

    @Test func refusesTrailingData() {
        #expect(throws: JSONReader.Failure.self) {
            try read("{} {}") { (r: inout JSONReader) throws(JSONReader.Failure) in try r.skipValue() }
        }
    }

    @Test func writerOutputReadsBack() throws {
        var writer = JSONWriter()
        writer.object { w in
            w.member("s", "quote \" backslash \\ newline \n tab \t bell \u{07} é")
            w.member("n", Int64(-5))
            w.key("d")
            w.number(1.23456)
            w.key("whole")
            w.number(2.0)
        }
        let text = String(decoding: writer.bytes, as: UTF8.self)
        #expect(text == #"{"s":"quote \" backslash \\ newline \n tab \t bell \u0007 é","n":-5,"d":1.23,"whole":2}"#)
        var members: [String] = []
        try read(text) { (r: inout JSONReader) throws(JSONReader.Failure) in
            try r.readObject { (r: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
                if key.is("s") { members.append(try r.readString()) } else { try r.skipValue() }
            }
        }
        #expect(members == ["quote \" backslash \\ newline \n tab \t bell \u{07} é"])
    }
}
