import CLibPQ

// Char-literal macros of postgres_ext.h, which Swift does not import.
let PG_DIAG_SEVERITY_NONLOCALIZED = Int32(UInt8(ascii: "V"))
let PG_DIAG_SQLSTATE = Int32(UInt8(ascii: "C"))
let PG_DIAG_MESSAGE_PRIMARY = Int32(UInt8(ascii: "M"))
let PG_DIAG_MESSAGE_DETAIL = Int32(UInt8(ascii: "D"))
let PG_DIAG_MESSAGE_HINT = Int32(UInt8(ascii: "H"))

/// The one funnel from libpq failures to `PostgresError`.
extension PostgresError {
    /// The error described by a failed `PGresult` (server fields first) or, without one, by the
    /// connection's `PQerrorMessage`. A connection left in `CONNECTION_BAD` makes it `.connection`.
    /// `redact` hides secrets (the password) in messages that libpq may have built from the URL.
    static func libpq(
        result: OpaquePointer?,
        connection: OpaquePointer?,
        redact: (String) -> String = { $0 }
    ) -> PostgresError {
        let broken = connection.map { PQstatus($0) == CONNECTION_BAD } ?? true
        if let result, let primary = field(result, PG_DIAG_MESSAGE_PRIMARY) {
            let error = PostgresError(
                kind: .query,
                message: redact(primary),
                sqlState: field(result, PG_DIAG_SQLSTATE),
                detail: field(result, PG_DIAG_MESSAGE_DETAIL).map(redact),
                hint: field(result, PG_DIAG_MESSAGE_HINT).map(redact))
            return broken ? error.with(kind: .connection) : error
        }
        var text = result.flatMap { PQresultErrorMessage($0) }.map { String(cString: $0) } ?? ""
        if text.isEmpty, let connection, let message = PQerrorMessage(connection) {
            text = String(cString: message)
        }
        let trimmed = text.trimmingSuffix(while: \.isWhitespace)
        return PostgresError(
            kind: broken ? .connection : .query,
            message: redact(trimmed.isEmpty ? "unknown libpq error" : trimmed))
    }

    /// The error for a call on a connection that `close()` already finished.
    static let closed = PostgresError(kind: .connection, message: "the connection is closed")

    private func with(kind: Kind) -> PostgresError {
        var copy = self
        copy.kind = kind
        return copy
    }

    private static func field(_ result: OpaquePointer, _ code: Int32) -> String? {
        PQresultErrorField(result, code).map { String(cString: $0) }
    }
}

extension String {
    func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var copy = self
        while let last = copy.last, predicate(last) { copy.removeLast() }
        return copy
    }
}
