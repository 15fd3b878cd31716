import Logging
import PresencePostgres
import PresenceStore
import ServiceLifecycle

/// Enforces how long history is kept (`--keep-sessions`, `--keep-events`): purges once the
/// database is reachable after the start, then every `interval`, through the client, so that a
/// slow purge never holds up storing. A failed purge is logged and tried again next time. Keeping
/// everything, it purges nothing and waits for the shutdown (a service that ended would stop the
/// aggregator).
final class RetentionService: Service {
    private let postgres: PostgresClient
    private let retention: Retention
    private let interval: Duration
    private let logger: Logger

    init(postgres: PostgresClient, retention: Retention, interval: Duration = .seconds(3_600), logger: Logger) {
        self.postgres = postgres
        self.retention = retention
        self.interval = interval
        self.logger = logger
    }

    func run() async throws {
        guard !retention.keepsEverything else {
            try? await gracefulShutdown()
            return
        }
        await cancelWhenGracefulShutdown { [self] in
            repeat {
                do {
                    let report = try await postgres.withConnection { try await $0.purge(retention) }
                    logger.log(level: report.isEmpty ? .debug : .info, "purged history past its retention", metadata: [
                        "sessions": "\(report.sessions)", "events": "\(report.events)", "notifications": "\(report.notifications)",
                    ])
                } catch is CancellationError {
                    break
                } catch {
                    logger.warning("could not purge history past its retention; trying again later", metadata: ["error": "\(error)"])
                }
            } while (try? await Task.sleep(for: interval)) != nil
        }
    }
}
