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
        var text = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { text += "," }
            guard let element else {
                text += "NULL"
                continue
            }
            text += "\""
            for character in element.unicodeScalars {
                if character == "\"" || character == "\\" { text += "\\" }
                text.unicodeScalars.append(character)
            }
            text += "\""
        }
        return text + "}"
    }
}
