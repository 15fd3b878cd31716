import Logging
import PresencePostgres
import ServiceLifecycle

extension PostgresConnection {
    /// Connects, retrying with back-off (1 s doubling to 30 s) while the server is unreachable
    /// (calling `unreachable` each time); throws `CancellationError` once the service is shutting down.
    static func connectRetrying(_ configuration: PostgresConfiguration, purpose: String, logger: Logger,
                                unreachable: () -> Void = {}) async throws -> PostgresConnection {
        var delay = 1
        while true {
            do {
                return try await PostgresConnection.connect(configuration, logger: logger)
            } catch let error as PostgresError where error.isConnectionFailure {
                unreachable()
                logger.error("cannot reach the database; retrying", metadata: ["for": "\(purpose)", "error": "\(error)", "retry_in_s": "\(delay)"])
                guard !Task.isShuttingDownGracefully else { throw CancellationError() }
                try await cancelWhenGracefulShutdown { [delay] in try await Task.sleep(for: .seconds(delay)) }
                delay = min(delay * 2, 30)
            }
        }
    }
}
