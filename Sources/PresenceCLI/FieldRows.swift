import PresenceCore

/// A query's rows as named, typed fields, for the machine-readable outputs: one JSON object per
/// row (times as epoch milliseconds), or CSV with the same names as its header (times in ISO 8601,
/// UTC). Tables for people are laid out by each command.
public struct FieldRows: Sendable {
    /// One field's value. A field that is nil in a row is left out of its JSON object (and empty in
    /// CSV); `.null` is written as JSON `null`.
    public enum Value: Sendable, Equatable {
        case text(String)
        case integer(Int64)
        /// Written to two decimals at most, in the shortest form (`61.5`, `2`).
        case number(Double)
        /// Epoch milliseconds.
        case time(Int64)
        case flag(Bool)
        case null
    }

    public let names: [String]
    public private(set) var rows: [[Value?]] = []

    public init(_ names: [String]) {
        self.names = names
    }

    /// Adds a row, one value per name, in the order of the names.
    public mutating func append(_ values: [Value?]) {
        precondition(values.count == names.count, "a row needs one value per field")
        rows.append(values)
    }

    /// One compact JSON object per row, each on its own line.
    public var jsonLines: String {
        rows.map { values in
            var w = JSONWriter()
            w.object { w in
                for (name, value) in zip(names, values) {
                    guard let value else { continue }
                    w.key(name)
                    switch value {
                    case .text(let text): w.string(text)
                    case .integer(let number), .time(let number): w.int(number)
                    case .number(let number): w.number(number)
                    case .flag(let flag): w.bool(flag)
                    case .null: w.null()
                    }
                }
            }
            return String(decoding: w.bytes, as: UTF8.self) + "\n"
        }.joined()
    }

    /// The rows as CSV under a header of the field names.
    public func csv() throws -> String {
        try CSVOutput.render(header: names, rows: rows.map { $0.map(Self.csvText) })
    }

    /// Prints the rows in `format`; `.table` prints `table()`.
    public func print(_ format: OutputFormat, table: () throws -> String) throws {
        switch format {
        case .json: Swift.print(jsonLines, terminator: "")
        case .csv: Swift.print(try csv(), terminator: "")
        case .table: Swift.print(try table())
        }
    }

    public static func csvText(_ value: Value?) -> String {
        switch value {
        case .text(let text): text
        case .integer(let number): String(number)
        case .number(let number): decimal(number)
        case .time(let milliseconds): Timestamps.iso8601(milliseconds)
        case .flag(let flag): flag ? "true" : "false"
        case .null, nil: ""
        }
    }

    /// A number as JSON writes it, so that both outputs agree.
    public static func decimal(_ number: Double) -> String {
        var w = JSONWriter()
        w.number(number)
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
