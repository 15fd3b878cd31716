import Foundation

/// Files the frame tests read, found from this source file's place in the package.
enum TestFiles {
    /// The package root: this file is `Tests/PresenceCoreTests/Frames/TestSupport.swift`.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The advertising test vectors the project carries in `data/frames/` (sources in its SOURCE.txt).
    static let vectors = packageRoot.appendingPathComponent("data/frames/vectors.json")

    static let fixtures = packageRoot.appendingPathComponent("Tests/Fixtures")
}

extension Array where Element == UInt8 {
    /// Bytes from hex text (`"0201"` → `[0x02, 0x01]`); nil for odd lengths or non-hex characters.
    init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self = bytes
    }

    /// Lower-case hex text of the bytes.
    var hex: String { map { ($0 < 0x10 ? "0" : "") + String($0, radix: 16) }.joined() }
}

extension ArraySlice where Element == UInt8 {
    var hex: String { Array(self).hex }
}

private func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0") ... UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a") ... UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A") ... UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
}

/// A JSON value, Sendable, for test tables read from files.
enum JSONValue: Sendable, Equatable, Decodable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses a JSON document.
    static func parse(_ data: Data) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: data)
    }

    var string: String? { if case .string(let value) = self { value } else { nil } }
    var number: Double? { if case .number(let value) = self { value } else { nil } }
    var int: Int? { number.flatMap { Int(exactly: $0) } }
    var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    var array: [JSONValue]? { if case .array(let value) = self { value } else { nil } }
    var object: [String: JSONValue]? { if case .object(let value) = self { value } else { nil } }
    var isNull: Bool { self == .null }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): "\(value)"
        case .string(let value): "\"\(value)\""
        case .array(let value): "\(value)"
        case .object(let value): "\(value)"
        }
    }
}
