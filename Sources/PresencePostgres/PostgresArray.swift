/// An array parameter (`$1::text[]`, `$1::bigint[]`...) in PostgreSQL's array literal: every
/// element double-quoted with backslashes and quotes escaped, nil as NULL. One parameter carries a
/// whole column, so that one statement (`unnest`) stores many rows.
public struct PostgresArray: PostgresEncodable {
    public let elements: [String?]

    public init(_ elements: [String?]) {
        self.elements = elements
    }

    public init(_ elements: [some PostgresEncodable]) {
        self.elements = elements.map(\.postgresText)
    }

    public var postgresText: String {
        // Built as UTF-8 bytes: `"` and `\` never occur inside a multi-byte sequence, so escaping
        // them byte by byte is exact, and far cheaper than appending scalar by scalar.
        var text: [UInt8] = [UInt8(ascii: "{")]
        text.reserveCapacity(elements.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, element) in elements.enumerated() {
            if index > 0 { text.append(UInt8(ascii: ",")) }
            guard let element else {
                text += "NULL".utf8
                continue
            }
            text.append(UInt8(ascii: "\""))
            for byte in element.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { text.append(UInt8(ascii: "\\")) }
                text.append(byte)
            }
            text.append(UInt8(ascii: "\""))
        }
        text.append(UInt8(ascii: "}"))
        return String(decoding: text, as: UTF8.self)
    }
}
