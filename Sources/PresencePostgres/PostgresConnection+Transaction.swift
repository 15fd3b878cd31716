import CLibPQ
import Logging

extension PostgresConnection {
    /// Runs `body` between BEGIN and COMMIT; if it throws, rolls back and rethrows its error.
    /// Nesting is refused. A body that swallowed a failed statement makes the server turn COMMIT
    /// into ROLLBACK, which is reported as an error instead of passing silently.
    public func transaction<T: Sendable>(_ body: @Sendable (isolated PostgresConnection) throws -> T) throws -> T {
        let handle = try openHandle()
        guard PQtransactionStatus(handle) == PQTRANS_IDLE else {
            throw PostgresError(kind: .usage, message: "transaction() cannot run inside another transaction")
        }
        _ = try query("BEGIN")
        let value: T
        do {
            value = try body(self)
        } catch {
            rollBack(after: error)
            throw error
        }
        let commit = PQexec(handle, "COMMIT")
        let tag = commit.flatMap { PQcmdStatus($0) }.map { String(cString: $0) }
        _ = try take(commit)
        guard tag != "ROLLBACK" else {
            throw PostgresError(kind: .query, message: "the transaction was rolled back because a statement in it failed")
        }
        return value
    }

    private func rollBack(after error: any Error) {
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return }
        do {
            _ = try query("ROLLBACK")
        } catch let rollbackError {
            logger.warning("rollback failed", metadata: ["error": "\(rollbackError)", "cause": "\(error)"])
        }
    }
}
