import Logging
import PresencePostgres
import PresenceStore
import ServiceLifecycle

/// Enforces how long history is kept (`--keep-sessions`, `--keep-events`): purges once the
/// database is reachable after the start, then every `interval`, on a connection of its own, so
/// that a slow purge never holds up storing. A failed purge is logged and tried again next time.
final class RetentionService: Service {
    private let database: PostgresConfiguration
    private let retention: Retention
    private let interval: Duration
    private let logger: Logger

    init(database: PostgresConfiguration, retention: Retention, interval: Duration = .seconds(3_600), logger: Logger) {
        self.database = database
        self.retention = retention
        self.interval = interval
        self.logger = logger
    }

    func run() async throws {
        guard !retention.keepsEverything else {
            // Nothing to purge, but a service that ends would stop the whole aggregator.
            try? await gracefulShutdown()
            return
        }
        await cancelWhenGracefulShutdown { [self] in
            var connection: PostgresConnection?
            repeat {
                do {
                    if connection == nil {
                        connection = try await PostgresConnection.connectRetrying(database, purpose: "retention", logger: logger)
                    }
                    if let report = try await connection?.purge(retention) {
                        let level: Logger.Level = report.isEmpty ? .debug : .info
                        logger.log(level: level, "purged history past its retention", metadata: [
                            "sessions": "\(report.sessions)", "events": "\(report.events)", "notifications": "\(report.notifications)",
                        ])
                    }
                } catch is CancellationError {
                    break
                } catch {
                    logger.warning("could not purge history past its retention; trying again later", metadata: ["error": "\(error)"])
                    await connection?.close()
                    connection = nil
                }
            } while (try? await Task.sleep(for: interval)) != nil
            await connection?.close()
        }
    }
}
