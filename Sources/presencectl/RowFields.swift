import PresenceCLI
import PresencePostgres

/// A database row's columns as the typed values of `FieldRows` (nil for NULL).
extension PostgresRow {
    func text(_ column: Int) -> FieldRows.Value? {
        string(column).map(FieldRows.Value.text)
    }

    func integer(_ column: Int) throws -> FieldRows.Value? {
        try int(column).map { .integer(Int64($0)) }
    }

    /// A column selected as epoch milliseconds (`(EXTRACT(EPOCH FROM t) * 1000)::bigint`).
    func time(_ column: Int) throws -> FieldRows.Value? {
        try int(column).map { .time(Int64($0)) }
    }

    func number(_ column: Int) throws -> FieldRows.Value? {
        try double(column).map(FieldRows.Value.number)
    }
}
