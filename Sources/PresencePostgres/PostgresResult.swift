import CLibPQ

/// The outcome of one statement: column names, rows (text format) and the affected-row count
/// from the command tag (rows inserted, updated, deleted, copied or selected; 0 when none applies).
public struct PostgresResult: Sendable {
    public let columns: [String]
    public let rows: [PostgresRow]
    public let affectedRows: Int

    public init(columns: [String], rows: [PostgresRow], affectedRows: Int) {
        self.columns = columns
        self.rows = rows
        self.affectedRows = affectedRows
    }

    /// Copies everything out of a successful `PGresult`; the caller still owns (and clears) it.
    init(copying result: OpaquePointer) {
        let fieldCount = PQnfields(result)
        let rowCount = PQntuples(result)
        let columns = (0..<fieldCount).map { field in PQfname(result, field).map { String(cString: $0) } ?? "" }
        let rows = (0..<rowCount).map { row in
            PostgresRow(columns: columns, values: (0..<fieldCount).map { field -> String? in
                guard PQgetisnull(result, row, field) == 0, let value = PQgetvalue(result, row, field) else { return nil }
                return String(cString: value)
            })
        }
        let tuples = PQcmdTuples(result).map { String(cString: $0) } ?? ""
        self.init(columns: columns, rows: rows, affectedRows: Int(tuples) ?? 0)
    }
}
