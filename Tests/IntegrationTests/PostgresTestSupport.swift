import Foundation
import Logging
import PresencePostgres
import Synchronization

/// Helpers shared by the PostgreSQL adapter's tests.
enum PostgresTestSupport {
    /// A logger that drops everything.
    static let quietLogger = Logger(label: "postgres-tests") { _ in SwiftLogNoOpLogHandler() }

    /// A connection to a fresh database, and that database's URL.
    static func connect(_ label: String, logger: Logger = quietLogger) async throws -> (PostgresConnection, String) {
        let url = try TestDatabase.create(label)
        return (try await PostgresConnection.connect(PostgresConfiguration(url: url), logger: logger), url)
    }

    /// Polls `condition` every 20 ms until it holds or `timeout` passes; returns whether it held.
    static func eventually(timeout: Duration, _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return try await condition()
    }
}

/// Log records kept in memory, to check what the adapter logged.
final class PostgresLogRecords: Sendable {
    struct Record: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: [String: String]
    }

    private let records = Mutex<[Record]>([])

    var all: [Record] { records.withLock { $0 } }

    func append(_ record: Record) { records.withLock { $0.append(record) } }

    var logger: Logger {
        Logger(label: "postgres-tests") { _ in PostgresCapturingLogHandler(records: self) }
    }
}

/// A log handler that appends to `PostgresLogRecords`.
struct PostgresCapturingLogHandler: LogHandler {
    let records: PostgresLogRecords
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        records.append(.init(level: event.level, message: event.message.description, metadata: merged.mapValues { "\($0)" }))
    }
}
