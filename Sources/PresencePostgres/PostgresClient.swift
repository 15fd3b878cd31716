import Logging
import PresenceCore
import ServiceLifecycle
import Synchronization

/// The way to one database for every part of a long-running program, in the shape of postgres-nio's
/// `PostgresClient`: a `Service` that hands out connections (`withConnection`), opening them as they
/// are needed and keeping a few idle ones, with one `RetryPolicy` for reaching the server, and that
/// closes them all when it stops. Its `run()` must be running while it is used; the parts that use
/// it stop before it does.
public final class PostgresClient: Service, Sendable {
    public let configuration: PostgresConfiguration
    public let retry: RetryPolicy
    private let idleLimit: Int
    private let logger: Logger
    private let reachabilityChanged: @Sendable (Bool) -> Void
    private let state = Mutex(State())

    private struct State {
        var idle: [PostgresConnection] = []
        var closed = false
        /// Connection attempts that failed in a row, and when the next may be made.
        var failures = 0
        var nextAttempt: ContinuousClock.Instant?
        var reachable: Bool?
        var shutdown: [CheckedContinuation<Void, Never>] = []
    }

    /// Why a connection was not handed out.
    public struct ClosedError: Error, CustomStringConvertible {
        public var description: String { "the database client has stopped" }
    }

    /// A client of `configuration`'s database that keeps up to `idleLimit` idle connections;
    /// `reachabilityChanged` hears when the server stops answering connection attempts and when it
    /// answers again.
    public init(configuration: PostgresConfiguration, retry: RetryPolicy = RetryPolicy(), idleLimit: Int = 4, logger: Logger,
                reachabilityChanged: @escaping @Sendable (Bool) -> Void = { _ in }) {
        self.configuration = configuration
        self.retry = retry
        self.idleLimit = max(0, idleLimit)
        self.logger = logger
        self.reachabilityChanged = reachabilityChanged
    }

    /// Runs `body` with a connection: an idle one, or a new one. While the server cannot be reached
    /// it waits and tries again under the retry policy (every caller waits for the same next
    /// attempt; with `retrying` false it throws the connection error instead), until the calling
    /// service shuts down or its task is cancelled (`CancellationError`). The connection goes back
    /// idle after `body` returns, and is closed when `body` throws.
    public func withConnection<T: Sendable>(retrying: Bool = true, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await lease(retrying: retrying)
        let value: T
        do {
            value = try await body(connection)
        } catch {
            await connection.close()
            throw error
        }
        await giveBack(connection)
        return value
    }

    /// A dedicated connection that listens on `channels`, reconnecting under the client's policy.
    public func listener(channels: [String]) -> PostgresListener {
        PostgresListener(configuration: configuration, channels: channels, retry: retry, logger: logger)
    }

    /// Waits for the shutdown (or cancellation), then closes the idle connections and hands out
    /// no more; a connection in use is closed when it comes back.
    public func run() async throws {
        await withTaskCancellationOrGracefulShutdownHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let closed = state.withLock { state in
                    if !state.closed { state.shutdown.append(continuation) }
                    return state.closed
                }
                if closed { continuation.resume() }
            }
        } onCancelOrGracefulShutdown: { [self] in
            let waiting = state.withLock { state in
                state.closed = true
                defer { state.shutdown = [] }
                return state.shutdown
            }
            waiting.forEach { $0.resume() }
        }
        let idle = state.withLock { state in
            state.closed = true
            defer { state.idle = [] }
            return state.idle
        }
        for connection in idle { await connection.close() }
    }

    private func lease(retrying: Bool) async throws -> PostgresConnection {
        while true {
            enum Next { case closed, use(PostgresConnection), wait(Duration), connect }
            let next = state.withLock { state -> Next in
                if state.closed { return .closed }
                if let connection = state.idle.popLast() { return .use(connection) }
                if let at = state.nextAttempt, at > .now { return .wait(at - .now) }
                return .connect
            }
            switch next {
            case .closed:
                throw ClosedError()
            case .use(let connection):
                return connection
            case .wait(let delay):
                guard retrying else { throw PostgresError(kind: .connection, message: "the database cannot be reached now") }
                guard !Task.isShuttingDownGracefully else { throw CancellationError() }
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: delay) }
            case .connect:
                do {
                    let connection = try await PostgresConnection.connect(configuration, logger: logger)
                    reached(true, error: nil)
                    return connection
                } catch let error as PostgresError where error.isConnectionFailure {
                    reached(false, error: error)
                    guard retrying else { throw error }
                }
            }
        }
    }

    /// Notes the outcome of a connection attempt: a failure sets when the next may be made.
    private func reached(_ reachable: Bool, error: PostgresError?) {
        let (changed, delay) = state.withLock { state -> (Bool, Duration?) in
            let changed = state.reachable != reachable
            state.reachable = reachable
            if reachable {
                state.failures = 0
                state.nextAttempt = nil
                return (changed, nil)
            }
            state.failures += 1
            let delay = retry.delay(after: state.failures)
            state.nextAttempt = .now + delay
            return (changed, delay)
        }
        if let error, let delay {
            logger.log(level: changed ? .error : .debug, "cannot reach the database; retrying",
                       metadata: ["postgres.target": "\(configuration)", "error": "\(error)", "retry_in": "\(delay)"])
        } else if changed {
            logger.info("the database is reachable", metadata: ["postgres.target": "\(configuration)"])
        }
        if changed { reachabilityChanged(reachable) }
    }

    private func giveBack(_ connection: PostgresConnection) async {
        let keep = state.withLock { state in
            guard !state.closed, state.idle.count < idleLimit else { return false }
            state.idle.append(connection)
            return true
        }
        if !keep { await connection.close() }
    }
}
