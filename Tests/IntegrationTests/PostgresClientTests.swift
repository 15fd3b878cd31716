import Foundation
import Logging
import PresenceCore
import PresencePostgres
import ServiceLifecycle
import Synchronization
import Testing

/// The one client of a database: connections handed out and kept idle, closed after a failed
/// body, one retry policy while the server cannot be reached (said once, through the callback), no
/// wait at all when asked not to retry, and every connection closed at the shutdown.
@Suite(.timeLimit(.minutes(1)))
struct PostgresClientTests {
    /// `client` running in a service group until `body` returns; then the group shuts down.
    static func running<T: Sendable>(_ client: PostgresClient, _ body: () async throws -> T) async throws -> T {
        let group = ServiceGroup(services: [client], logger: PostgresTestSupport.quietLogger)
        let task = Task { try await group.run() }
        do {
            let value = try await body()
            await group.triggerGracefulShutdown()
            try await task.value
            return value
        } catch {
            await group.triggerGracefulShutdown()
            try? await task.value
            throw error
        }
    }

    static func backend(_ connection: PostgresConnection) async throws -> Int {
        try await connection.query("SELECT pg_backend_pid()").rows.first?.int(0) ?? -1
    }

    @Test func anIdleConnectionIsHandedOutAgainAndOneWhoseBodyFailedIsNot() async throws {
        let url = try TestDatabase.create("client")
        let client = PostgresClient(configuration: PostgresConfiguration(url: url), logger: PostgresTestSupport.quietLogger)
        try await Self.running(client) {
            let first = try await client.withConnection { try await Self.backend($0) }
            #expect(try await client.withConnection { try await Self.backend($0) } == first, "the idle connection was not reused")
            await #expect(throws: PostgresError.self) {
                try await client.withConnection { connection in try await connection.query("SELECT * FROM no_such_table") }
            }
            #expect(try await client.withConnection { try await Self.backend($0) } != first, "a connection whose body failed went back idle")
        }
        await #expect(throws: PostgresClient.ClosedError.self) { try await client.withConnection { _ in 1 } }
        // Every connection is closed once the client has stopped.
        #expect(await PostgresTestSupport.eventually(timeout: .seconds(5)) {
            (try? TestDatabase.rows(url, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")) == ["0"]
        })
    }

    @Test func anUnreachableServerIsTriedAgainUnderThePolicyAndSaidOnce() async throws {
        // A port nothing listens on.
        var configuration = PostgresConfiguration(url: "postgres://presence@127.0.0.1:9/none")
        configuration.connectTimeout = 2
        let changes = Mutex<[Bool]>([])
        let client = PostgresClient(configuration: configuration, retry: RetryPolicy(first: .milliseconds(200), longest: .milliseconds(400)),
                                    logger: PostgresTestSupport.quietLogger) { reachable in changes.withLock { $0.append(reachable) } }
        try await Self.running(client) {
            let started = ContinuousClock.now
            await #expect(throws: PostgresError.self) { try await client.withConnection(retrying: false) { _ in 1 } }
            let waiting = Task { try await client.withConnection { _ in 1 } }
            try await Task.sleep(for: .milliseconds(1_500))
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
            #expect(ContinuousClock.now - started >= .milliseconds(1_500))
            // One "unreachable", however many attempts failed.
            #expect(changes.withLock { $0 } == [false])
        }
    }
}
