/// One row of a result in text format, columns by index or by name. Typed getters return nil
/// for NULL and throw a `.decoding` `PostgresError` for text they cannot read (or a missing column).
public struct PostgresRow: Sendable {
    /// The column names, shared with the result.
    public let columns: [String]
    /// The raw text values, nil for NULL.
    public let values: [String?]

    init(columns: [String], values: [String?]) {
        self.columns = columns
        self.values = values
    }

    /// The text of a column; nil for NULL or for a column the row does not have.
    public func string(_ column: Int) -> String? {
        values.indices.contains(column) ? values[column] : nil
    }

    /// The text of the first column with this name; nil for NULL or a missing column.
    public func string(_ name: String) -> String? {
        columns.firstIndex(of: name).flatMap { string($0) }
    }

    public func int(_ column: Int) throws -> Int? { try decode(column, "an integer") { Int($0) } }
    public func int(_ name: String) throws -> Int? { try int(index(of: name)) }

    public func double(_ column: Int) throws -> Double? { try decode(column, "a double") { Double($0) } }
    public func double(_ name: String) throws -> Double? { try double(index(of: name)) }

    /// Reads PostgreSQL's `t`/`f` (and `true`/`false`).
    public func bool(_ column: Int) throws -> Bool? {
        try decode(column, "a boolean") { text in
            switch text {
            case "t", "true": true
            case "f", "false": false
            default: nil
            }
        }
    }

    public func bool(_ name: String) throws -> Bool? { try bool(index(of: name)) }

    private func index(of name: String) throws -> Int {
        guard let index = columns.firstIndex(of: name) else {
            throw PostgresError(kind: .decoding, message: "the result has no column \"\(name)\"")
        }
        return index
    }

    private func decode<T>(_ column: Int, _ what: String, _ parse: (String) -> T?) throws -> T? {
        guard values.indices.contains(column) else {
            throw PostgresError(kind: .decoding, message: "the result has no column \(column)")
        }
        guard let text = values[column] else { return nil }
        guard let value = parse(text) else {
            let name = columns.indices.contains(column) ? columns[column] : String(column)
            throw PostgresError(kind: .decoding, message: "column \"\(name)\" holds \"\(text.prefix(40))\", not \(what)")
        }
        return value
    }
}
