import Logging
import PresencePostgres
import PresenceStore
import ServiceLifecycle

/// Looks after stored history once the database is reachable after the start, then every
/// `interval`, through the client, so that it never holds up storing: makes the monthly
/// partitions ahead (and moves stray rows into theirs), and enforces how long history is kept
/// (`--keep-sessions`, `--keep-events`). A failed round is logged and tried again next time.
final class HistoryMaintenance: Service {
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
        await cancelWhenGracefulShutdown { [self] in
            repeat {
                do {
                    try await postgres.withConnection { [retention, logger] db in
                        guard !retention.keepsEverything else {
                            let made = try await db.maintainHistoryPartitions()
                            logger.log(level: made == 0 ? .debug : .info, "made monthly partitions of history", metadata: ["made": "\(made)"])
                            return
                        }
                        let report = try await db.purge(retention)
                        logger.log(level: report.isEmpty ? .debug : .info, "purged history past its retention", metadata: [
                            "sessions": "\(report.sessions)", "zone_sessions": "\(report.zoneSessions)", "events": "\(report.events)", "notifications": "\(report.notifications)",
                            "months": "\(report.months)",
                        ])
                    }
                } catch is CancellationError {
                    break
                } catch {
                    logger.warning("could not look after stored history; trying again later", metadata: ["error": "\(error)"])
                }
            } while (try? await Task.sleep(for: interval)) != nil
        }
    }
}
