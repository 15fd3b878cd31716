import CLibPQ
import Foundation

extension PostgresConnection {
    /// Sends every statement in libpq pipeline mode followed by one sync, and returns their results
    /// in order. The statements between the sync points form **one implicit transaction**: if one
    /// fails, the ones after it are skipped and the ones before it are rolled back too. The first
    /// error is thrown once every result has been drained. Inside `transaction()`, the enclosing
    /// transaction applies instead. Runs non-blocking, so a large batch cannot deadlock.
    public func pipeline(_ statements: [(sql: String, parameters: [PostgresParameter])]) throws -> [PostgresResult] {
        let handle = try openHandle()
        guard !statements.isEmpty else { return [] }
        let parameters = try statements.map { try Self.texts($0.parameters) }
        guard PQenterPipelineMode(handle) == 1 else { throw PostgresError.libpq(result: nil, connection: handle) }
        guard PQsetnonblocking(handle, 1) == 0 else {
            PQexitPipelineMode(handle)
            throw PostgresError.libpq(result: nil, connection: handle)
        }
        defer { PQsetnonblocking(handle, 0) }
        var drain = PipelineDrain(statementCount: statements.count)
        do {
            for (statement, values) in zip(statements, parameters) {
                let sent = try withCStrings(values) { values in
                    PQsendQueryParams(handle, statement.sql, Int32(clamping: values.count), nil, values, nil, nil, 0)
                }
                guard sent == 1 else { throw PostgresError.libpq(result: nil, connection: handle) }
                drain.sent += 1
                if drain.sent % 256 == 0 {
                    guard PQflush(handle) >= 0, PQconsumeInput(handle) == 1 else {
                        throw PostgresError.libpq(result: nil, connection: handle)
                    }
                    drain.collect(handle)
                }
            }
            guard PQpipelineSync(handle) == 1 else { throw PostgresError.libpq(result: nil, connection: handle) }
            drain.syncSent = true
            try finish(&drain, handle)
        } catch {
            PQexitPipelineMode(handle)
            throw error
        }
        guard PQexitPipelineMode(handle) == 1 else { throw PostgresError.libpq(result: nil, connection: handle) }
        if let firstError = drain.firstError { throw firstError }
        let results = drain.results.compactMap { $0 }
        guard results.count == statements.count else {
            throw PostgresError(kind: .query, message: "the pipeline returned \(results.count) results for \(statements.count) statements")
        }
        return results
    }

    /// Flushes what is left to send and collects results until the sync arrives.
    private func finish(_ drain: inout PipelineDrain, _ handle: OpaquePointer) throws {
        while true {
            let flush = PQflush(handle)
            guard flush >= 0 else { throw PostgresError.libpq(result: nil, connection: handle) }
            drain.collect(handle)
            if drain.synced { return }
            let socket = PQsocket(handle)
            guard socket >= 0 else { throw PostgresError.libpq(result: nil, connection: handle) }
            _ = waitForSocket(socket, events: Int16(POLLIN) | (flush == 1 ? Int16(POLLOUT) : 0))
            guard PQconsumeInput(handle) == 1 else { throw PostgresError.libpq(result: nil, connection: handle) }
        }
    }
}

/// The results of a pipeline as they arrive: one result then a NULL per statement, then the sync.
private struct PipelineDrain {
    var results: [PostgresResult?]
    var sent = 0
    var syncSent = false
    var synced = false
    var firstError: PostgresError?
    /// The statement whose results `PQgetResult` is returning.
    private var current = 0

    init(statementCount: Int) {
        results = Array(repeating: nil, count: statementCount)
    }

    /// Takes every result libpq can return without blocking.
    mutating func collect(_ handle: OpaquePointer) {
        while current < sent || (syncSent && !synced), PQisBusy(handle) == 0 {
            guard let result = PQgetResult(handle) else {
                // A NULL ends a statement's results; past the last statement nothing is ready yet.
                guard current < sent else { return }
                current += 1
                continue
            }
            defer { PQclear(result) }
            switch PQresultStatus(result) {
            case PGRES_PIPELINE_SYNC:
                synced = true
            case PGRES_PIPELINE_ABORTED:
                break
            case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
                if results.indices.contains(current) { results[current] = PostgresResult(copying: result) }
            default:
                if firstError == nil { firstError = PostgresError.libpq(result: result, connection: handle) }
            }
        }
    }
}
