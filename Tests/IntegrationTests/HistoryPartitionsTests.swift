import Foundation
import PresenceCore
import PresencePostgres
import PresenceStore
import Testing

/// Sessions and events partitioned by month: history written before the migration lands in its
/// months with its ids, an exit moves its session into the month it ended, open sessions stay one
/// per user, and retention drops whole months (never one with an event still to publish).
@Suite struct HistoryPartitionsTests {
    static func sessionRow(_ user: String, entered: String, exited: String?) -> String {
        let exit = exited.map { "now() - interval '\($0)', 'timeout'" } ?? "NULL, NULL"
        return """
            INSERT INTO presence.sessions (user_key, beacon_key, device, entered_at, last_seen_at, exited_at, exit_reason, enter_event)
            VALUES ('\(user)', 'desk-1', 'x', now() - interval '\(entered)', now() - interval '\(entered)', \(exit), gen_random_uuid())
            """
    }

    static func eventRow(_ user: String, age: String, published: Bool) -> String {
        """
        INSERT INTO presence.events (id, kind, user_key, beacon_key, at, payload, published_at)
        VALUES (gen_random_uuid(), 'enter', '\(user)', 'desk-1', now() - interval '\(age)', '{}', \(published ? "now()" : "NULL"))
        """
    }

    /// Where each row of sessions and events lives, as "table user".
    static func placement(_ database: PostgresConnection) async throws -> [String] {
        try await database.query("""
            SELECT tableoid::regclass::text || ' ' || user_key FROM presence.sessions
            UNION ALL SELECT tableoid::regclass::text || ' ' || user_key FROM presence.events ORDER BY 1
            """).rows.compactMap { $0.string(0) }
    }

    static func month(_ table: String, _ interval: String, _ database: PostgresConnection) async throws -> String {
        try await database.query("SELECT 'presence.\(table)_' || to_char((now() - interval '\(interval)') AT TIME ZONE 'UTC', 'YYYY_MM')")
            .rows.first?.string(0) ?? ""
    }

    @Test func historyWrittenBeforeTheMigrationKeepsItsRowsAndIdsInItsMonths() async throws {
        let (database, _) = try await PostgresTestSupport.connect("partition-migrate")
        let logger = PostgresTestSupport.quietLogger
        _ = try await database.migrate(Migration.all.filter { $0.version < 15 }, logger: logger)
        try await database.query(Self.sessionRow("old", entered: "401 days", exited: "400 days"))
        try await database.query(Self.sessionRow("open", entered: "2 days", exited: nil))
        try await database.query(Self.eventRow("old", age: "401 days", published: true))
        let before = try await database.query("SELECT id, user_key FROM presence.sessions ORDER BY id").rows.map { "\(try $0.int(0) ?? -1) \($0.string(1) ?? "")" }
        let visitsBefore = try await database.query("SELECT count(*) FROM presence.visits_v").rows.first?.int(0)

        #expect(try await database.migrate(logger: logger) == Migration.all.map(\.version).filter { $0 >= 15 })
        let after = try await database.query("SELECT id, user_key FROM presence.sessions ORDER BY id").rows.map { "\(try $0.int(0) ?? -1) \($0.string(1) ?? "")" }
        #expect(after == before)
        #expect(try await database.query("SELECT count(*) FROM presence.visits_v").rows.first?.int(0) == visitsBefore)
        #expect(try await database.query("SELECT relkind::text FROM pg_class WHERE oid IN ('presence.sessions'::regclass, 'presence.events'::regclass)")
            .rows.map { $0.string(0) } == ["p", "p"])
        let oldSessions = try await Self.month("sessions", "400 days", database), oldEvents = try await Self.month("events", "401 days", database)
        #expect(try await Self.placement(database) == ["\(oldEvents) old", "\(oldSessions) old", "presence.sessions_default open"].sorted())
        // New sessions carry on numbering after the old ones.
        try await database.query(Self.sessionRow("new", entered: "1 minute", exited: nil))
        let newID = try await database.query("SELECT id FROM presence.sessions WHERE user_key = 'new'").rows.first?.int(0)
        #expect(newID == (before.compactMap { Int($0.split(separator: " ")[0]) }.max()).map { $0 + 1 })
        await database.close()
    }

    @Test func anExitMovesItsSessionIntoItsMonthAndOpenSessionsStayOnePerUser() async throws {
        let (database, _) = try await PostgresTestSupport.connect("partition-exit")
        _ = try await database.migrate(logger: PostgresTestSupport.quietLogger)
        try await database.query(Self.sessionRow("ann", entered: "1 hour", exited: nil))
        await #expect(throws: PostgresError.self) { try await database.query(Self.sessionRow("ann", entered: "1 minute", exited: nil)) }
        try await database.query("UPDATE presence.sessions SET exited_at = now(), exit_reason = 'timeout' WHERE user_key = 'ann' AND exited_at IS NULL")
        #expect(try await Self.placement(database) == ["\(try await Self.month("sessions", "0 days", database)) ann"])
        try await database.query(Self.sessionRow("ann", entered: "1 minute", exited: nil))
        #expect(try await database.query("SELECT count(*) FROM presence.current_v WHERE user_key = 'ann'").rows.first?.int(0) == 1)
        await database.close()
    }

    @Test func retentionDropsWholeMonthsButNotOneWithAnEventToPublish() async throws {
        let h = try PipelineHarness("partition-purge")
        try await h.ctlOKAsync("migrate")
        let database = try await PostgresConnection.connect(PostgresConfiguration(url: h.databaseURL), logger: PostgresTestSupport.quietLogger)
        // Written straight into the default partitions (their months have no partition yet).
        try await database.query(Self.sessionRow("gone", entered: "400 days", exited: "400 days"))
        try await database.query(Self.sessionRow("open-long", entered: "400 days", exited: nil))
        try await database.query(Self.eventRow("gone", age: "400 days", published: true))
        try await database.query(Self.eventRow("waiting", age: "300 days", published: false))
        try await database.query(Self.eventRow("recent", age: "1 day", published: true))
        let purged = try await h.ctlOKAsync("purge", "--keep-sessions", "30d", "--keep-events", "30d")
        #expect(purged.contains("purged 1 sessions, 0 zone sessions, 1 events and 0 notifications (2 whole months)"), "\(purged)")
        let waitingMonth = try await Self.month("events", "300 days", database)
        #expect(try await Self.placement(database) == [
            "\(try await Self.month("events", "1 day", database)) recent", "\(waitingMonth) waiting", "presence.sessions_default open-long",
        ].sorted())
        #expect(try await database.query("SELECT to_regclass($1) IS NULL", [try await Self.month("sessions", "400 days", database)]).rows.first?.bool(0) == true)
        // Once published, the waiting event's month goes too.
        try await database.query("UPDATE presence.events SET published_at = now() WHERE user_key = 'waiting'")
        #expect(try await h.ctlOKAsync("purge", "--keep-sessions", "30d", "--keep-events", "30d").contains("purged 0 sessions, 0 zone sessions, 1 events and 0 notifications (1 whole months)"))
        await database.close()
    }

    @Test func theAggregatorMakesTheMonthsAheadEvenWhenItKeepsEverything() async throws {
        let h = try PipelineHarness("partition-ahead")
        try await h.ctlOKAsync("migrate")
        let database = try await PostgresConnection.connect(PostgresConfiguration(url: h.databaseURL), logger: PostgresTestSupport.quietLogger)
        // As if the migration had run long ago: drop the months from this one on.
        let thisMonth = try await Self.month("sessions", "0 days", database)
        for table in ["sessions", "events"] {
            let partitions = try await database.query("""
                SELECT c.oid::regclass::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                WHERE i.inhparent = 'presence.\(table)'::regclass AND c.relname <> '\(table)_default'
                """).rows.compactMap { $0.string(0) }
            for partition in partitions { try await database.query("DROP TABLE \(partition)") }
        }
        #expect(try await database.query("SELECT to_regclass($1) IS NULL", [thisMonth]).rows.first?.bool(0) == true)
        let aggregator = try h.startAggregator(["--keep-sessions", "forever", "--keep-events", "forever"])
        try await eventuallyAsync(20, "this month's partition") {
            (try? await database.query("SELECT to_regclass($1) IS NOT NULL", [thisMonth]).rows.first?.bool(0)) == true
        }
        await aggregator.stop()
        await database.close()
    }
}
