import CLibPQ
import Logging

extension PostgresConnection {
    /// Makes sure the connection works: a broken one (or one whose backend has gone, found with an
    /// empty round trip) is reset with `PQreset`, blocking on the connection's thread for up to
    /// `connectTimeout`. A reset loses session state: temporary tables, `SET`s, open transactions.
    /// Throws a `.connection` error if the server is still unreachable.
    public func ensureConnected() throws {
        let handle = try openHandle()
        if PQstatus(handle) == CONNECTION_OK {
            if let probe = PQexec(handle, "") { PQclear(probe) }
            if PQstatus(handle) == CONNECTION_OK { return }
        }
        logger.warning("connection lost, resetting", metadata: [
            "error": "\(PostgresError.libpq(result: nil, connection: handle, redact: redact))",
        ])
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError.libpq(result: nil, connection: handle, redact: redact)
        }
        logger.info("connection re-established", metadata: ["postgres.backend_pid": "\(PQbackendPID(handle))"])
    }
}
