import Foundation

/// An error from libpq or the server: the SQLSTATE (`23505`...), the server's primary message,
/// its detail and hint, and what kind of failure it was. The description is one line and never
/// holds a password or the connection URL.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// What failed: the connection, a statement, reading a column, or a call the adapter refuses.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        /// Connecting failed, or the connection broke (or was closed) under a call.
        public static let connection = Kind(name: "connection")
        /// The server rejected a statement; the connection is still usable.
        public static let query = Kind(name: "query")
        /// A column's text could not be read as the requested type.
        public static let decoding = Kind(name: "decoding")
        /// The adapter refused a call, such as a nested transaction or a NUL byte in a parameter.
        public static let usage = Kind(name: "usage")

        public var description: String { name }
    }

    public var kind: Kind
    /// The five-character SQLSTATE the server sent, nil for errors raised by libpq or the adapter.
    public var sqlState: String?
    /// The server's primary message, or libpq's (or the adapter's) message.
    public var message: String
    public var detail: String?
    public var hint: String?

    public init(kind: Kind, message: String, sqlState: String? = nil, detail: String? = nil, hint: String? = nil) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.hint = hint
    }

    /// True when the connection itself failed (kind `.connection`, SQLSTATE class 08, or the
    /// server shutting the session down, 57P01...57P03): call `ensureConnected()` and retry.
    public var isConnectionFailure: Bool {
        if kind == .connection { return true }
        guard let sqlState else { return false }
        return sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    /// True when trying again later may well succeed: a connection failure, or a statement the
    /// server gave up for now (a statement or lock timeout, a deadlock or serialization failure, a
    /// lack of resources, an operator's intervention). Other statement errors fail the same way
    /// every time.
    public var isTransient: Bool {
        if isConnectionFailure { return true }
        guard let sqlState else { return kind != .query && kind != .decoding && kind != .usage }
        return sqlState.hasPrefix("40") || sqlState.hasPrefix("53") || sqlState.hasPrefix("57") || sqlState == "55P03"
    }

    /// `[23505] duplicate key value violates unique constraint "t_pkey"`; `[connection] ...` without a SQLSTATE.
    public var description: String {
        let line = message.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: " ")
        return "[\(sqlState ?? kind.description)] \(line)"
    }
}
