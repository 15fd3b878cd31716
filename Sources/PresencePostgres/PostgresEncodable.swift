import Foundation

/// A value sent as a text-format parameter (`$1`, `$2`...). Never spliced into SQL.
public protocol PostgresEncodable: Sendable {
    /// The value in PostgreSQL's text input format.
    var postgresText: String { get }
}

/// One parameter of a query; `nil` is SQL NULL.
public typealias PostgresParameter = (any PostgresEncodable)?

extension String: PostgresEncodable {
    public var postgresText: String { self }
}

extension Int: PostgresEncodable {
    public var postgresText: String { String(self) }
}

extension Int64: PostgresEncodable {
    public var postgresText: String { String(self) }
}

extension Int32: PostgresEncodable {
    public var postgresText: String { String(self) }
}

extension Double: PostgresEncodable {
    /// Swift's shortest round-trip form; the special values in the words `float8in` accepts.
    public var postgresText: String {
        if isNaN { return "NaN" }
        if isInfinite { return self > 0 ? "Infinity" : "-Infinity" }
        return String(self)
    }
}

extension Bool: PostgresEncodable {
    public var postgresText: String { self ? "t" : "f" }
}
