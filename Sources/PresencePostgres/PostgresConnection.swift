import CLibPQ
import Logging

/// One libpq connection. The `PGconn` is actor state, and the actor runs on its own OS thread
/// (`ThreadExecutor`), so every libpq call happens on that one thread and blocking calls never
/// run on Swift's cooperative pool. Close it with `close()`.
public actor PostgresConnection {
    /// The `PGconn`, nil before connecting and after `close()`.
    var handle: OpaquePointer?
    let configuration: PostgresConfiguration
    let logger: Logger
    /// Hides the password in libpq messages about connecting.
    let redact: @Sendable (String) -> String
    private let executor: ThreadExecutor
    /// Outlives `handle`: libpq holds an unretained pointer to it.
    private let notices: NoticeSink

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    private init(configuration: PostgresConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.redact = ConnectionString.redactor(for: configuration.url)
        self.executor = ThreadExecutor(name: "postgres")
        self.notices = NoticeSink(logger: logger)
    }

    /// Connects (blocking on the connection's own thread) and returns the open connection.
    public static func connect(_ configuration: PostgresConfiguration, logger: Logger) async throws -> PostgresConnection {
        let connection = PostgresConnection(configuration: configuration, logger: logger)
        try await connection.open()
        return connection
    }

    private func open() throws {
        let connection = try ConnectionString.withParameters(configuration) { keywords, values in
            PQconnectdbParams(keywords, values, 1)
        }
        guard let connection else {
            throw PostgresError(kind: .connection, message: "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let error = PostgresError.libpq(result: nil, connection: connection, redact: redact)
            PQfinish(connection)
            logger.debug("connect failed", metadata: ["postgres.target": "\(configuration)", "error": "\(error)"])
            throw error
        }
        notices.install(on: connection)
        handle = connection
        logger.debug("connected", metadata: [
            "postgres.target": "\(configuration)",
            "postgres.backend_pid": "\(PQbackendPID(connection))",
        ])
    }

    /// True until `close()`. A broken connection stays open: `ensureConnected()` repairs it.
    public var isOpen: Bool { handle != nil }

    /// Runs one statement with text parameters (`$1`...; nil is NULL) and text results (`PQexecParams`).
    @discardableResult
    public func query(_ sql: String, _ parameters: [PostgresParameter] = []) throws -> PostgresResult {
        let handle = try openHandle()
        let values = try Self.texts(parameters)
        let result = try withCStrings(values) { values in
            PQexecParams(handle, sql, Int32(clamping: values.count), nil, values, nil, nil, 0)
        }
        return try take(result)
    }

    /// Runs several `;`-separated statements without parameters (`PQexec`, simple protocol), for
    /// migrations. Without an explicit transaction in the script, libpq runs it as one.
    public func execute(script: String) throws {
        let handle = try openHandle()
        _ = try take(PQexec(handle, script))
    }

    /// Closes the connection (`PQfinish`). Idempotent; later calls other than `close()` throw.
    public func close() {
        guard let handle else { return }
        PQfinish(handle)
        self.handle = nil
        logger.debug("connection closed")
    }

    isolated deinit {
        if let handle {
            logger.warning("connection released without close()")
            PQfinish(handle)
        }
    }

    func openHandle() throws -> OpaquePointer {
        guard let handle else { throw PostgresError.closed }
        return handle
    }

    /// Turns a statement's `PGresult` into a `PostgresResult` or the error it holds, clearing it.
    func take(_ result: OpaquePointer?) throws -> PostgresResult {
        guard let result else { throw PostgresError.libpq(result: nil, connection: handle) }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        switch status {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return PostgresResult(copying: result)
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            abandonCopy(status)
            throw PostgresError(kind: .usage, message: "COPY needs copyIn(_:rows:), not query() or execute(script:)")
        default:
            throw PostgresError.libpq(result: result, connection: handle)
        }
    }

    /// The parameters' texts; PostgreSQL text cannot hold NUL, and libpq would cut the value there.
    static func texts(_ parameters: [PostgresParameter]) throws -> [String?] {
        try parameters.map { parameter in
            guard let text = parameter?.postgresText else { return nil }
            guard !text.utf8.contains(0) else {
                throw PostgresError(kind: .usage, message: "a parameter contains a NUL character, which PostgreSQL text cannot hold")
            }
            return text
        }
    }
}
