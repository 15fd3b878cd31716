import Foundation
import PresenceCore
import PresenceMQTT
import Testing

/// The least-privilege roles `presencectl migrate` makes, used as a venue would: a login role per
/// program, member of one of them. Each refusal is checked next to what the role may do.
@Suite struct DatabaseRolesTests {
    static let tag = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:1"

    /// A login role that is a member of `group`, and the URL of `database` as that role.
    static func login(_ group: String, on database: String) throws -> String {
        let name = "\(group)_\(UInt32.random(in: .min ... .max))"
        _ = try TestDatabase.rows(database, "CREATE ROLE \(name) LOGIN IN ROLE \(group)")
        guard let at = database.firstIndex(of: "@"), let scheme = database.range(of: "://") else {
            throw TestSetupError(message: "unexpected database URL \(database)")
        }
        return String(database[..<scheme.upperBound]) + name + String(database[at...])
    }

    /// Runs `sql` as `url`'s role; nil when PostgreSQL refuses it, with the error it gave.
    static func attempt(_ url: String, _ sql: String) -> (rows: [String]?, error: String) {
        do {
            return (try TestDatabase.rows(url, sql), "")
        } catch {
            return (nil, "\(error)")
        }
    }

    static func seeded(_ label: String) async throws -> PipelineHarness {
        let h = try PipelineHarness(label)
        try await h.ctlOKAsync("migrate")
        try await h.ctlOKAsync("venue", "add", "lab")
        try await h.ctlOKAsync("beacon", "add", "desk-1", "--venue", "lab")
        try await h.ctlOKAsync("node", "add", "scan-1", "--venue", "lab", "--beacon", "desk-1")
        try await h.ctlOKAsync("user", "add", "alice")
        try await h.ctlOKAsync("device", "add", tag, "--user", "alice")
        _ = try h.rows("""
            INSERT INTO presence.sessions (user_key, beacon_key, venue_key, device, entered_at, last_seen_at, exited_at, exit_reason, enter_event)
            VALUES ('alice', 'desk-1', 'lab', '\(tag)', now() - interval '1 hour', now() - interval '50 minutes',
                    now() - interval '50 minutes', 'timeout', gen_random_uuid())
            """)
        return h
    }

    @Test func theAnalystReadsVisitsButNoDeviceAndWritesNothing() async throws {
        let h = try await Self.seeded("analyst")
        let analyst = try Self.login("presence_analyst", on: h.databaseURL)
        #expect(Self.attempt(analyst, "SELECT user_key, beacon_key, exit_reason FROM presence.visits_v").rows == ["alice|desk-1|timeout"])
        #expect(Self.attempt(analyst, "SELECT sum(unique_users) FROM presence.visits_30m_v").rows == ["1"])
        #expect(Self.attempt(analyst, "SELECT count(*) FROM presence.occupancy_30m_v").rows?.isEmpty == false)
        #expect(Self.attempt(analyst, "SELECT count(*) FROM presence.present_v").rows == ["0"])
        let columns = try h.rows("""
            SELECT table_name || '.' || column_name FROM information_schema.columns
            WHERE table_schema = 'presence' AND table_name IN ('visits_v', 'present_v') AND column_name ~ 'device|identity'
            """)
        #expect(columns.isEmpty, "an analyst view carries device identities: \(columns)")
        for refused in [
            "SELECT identity FROM presence.devices", "SELECT device FROM presence.sessions", "SELECT device FROM presence.sessions_v",
            "SELECT payload FROM presence.events", "SELECT * FROM presence.current_v",
            "INSERT INTO presence.users (key) VALUES ('mallory')", "DELETE FROM presence.sessions", "UPDATE presence.beacons SET name = 'x'",
            "CREATE TABLE presence.mine (x int)",
        ] {
            let result = Self.attempt(analyst, refused)
            #expect(result.rows == nil && result.error.contains("permission denied"), "analyst: \(refused) → \(result)")
        }
    }

    @Test func theAdminKeepsTheRegistryButCannotChangeHistoryOrTheSchema() async throws {
        let h = try await Self.seeded("admin")
        let admin = try Self.login("presence_admin", on: h.databaseURL)
        let ctl = try ChildProcess.spawn(try PackagePaths.executable("presencectl"), ["beacon", "add", "desk-2", "--venue", "lab", "--next-to", "desk-1"],
                                         environment: h.environment.merging(["PRESENCE_DATABASE_URL": admin]) { $1 })
        #expect(await ctl.wait() == 0, "\(ctl.stderr)")
        let sessions = try ChildProcess.spawn(try PackagePaths.executable("presencectl"), ["sessions", "--json"],
                                              environment: h.environment.merging(["PRESENCE_DATABASE_URL": admin]) { $1 })
        #expect(await sessions.wait() == 0 && sessions.stdout.contains("desk-1"), "\(sessions.stderr)")
        for refused in ["UPDATE presence.sessions SET beacon_key = 'desk-2'", "INSERT INTO presence.migrations VALUES (99, 'x', 'y')",
                        "DROP TABLE presence.events"] {
            let result = Self.attempt(admin, refused)
            #expect(result.rows == nil && (result.error.contains("permission denied") || result.error.contains("must be owner")),
                    "admin: \(refused) → \(result)")
        }
    }

    @Test func theAggregatorRunsAsItsRoleAndCannotTouchTheRegistry() async throws {
        let h = try await Self.seeded("aggregator")
        let role = try Self.login("presence_aggregator", on: h.databaseURL)
        for refused in ["INSERT INTO presence.users (key) VALUES ('mallory')", "DELETE FROM presence.devices", "UPDATE presence.nodes SET rssi_offset = 9",
                        "INSERT INTO presence.erasures DEFAULT VALUES"] {
            let result = Self.attempt(role, refused)
            #expect(result.rows == nil && result.error.contains("permission denied"), "aggregator: \(refused) → \(result)")
        }
        let bus = try await h.recorder()
        let aggregator = try ChildProcess.spawn(try PackagePaths.executable("presence-aggregator"),
                                                ["--state-dir", h.stateDirectory, "--log-level", "debug"],
                                                environment: h.environment.merging(["PRESENCE_DATABASE_URL": role]) { $1 })
        try await bus.wait(15, for: "the aggregator's online status") { messages in
            messages.contains { $0.topic == h.topics.aggregatorStatus && $0.text.contains("\"online\"") }
        }
        let publisher = try await h.publisher()
        for seq in 1 ... 8 {
            let ts = Int64(Date().timeIntervalSince1970 * 1000)
            try await publisher.publish(SightingBatch(node: "scan-1", seq: Int64(seq), sent: ts, sightings: [Sighting(ts: ts, id: Self.tag, rssi: -55, tx: -59)]),
                                        topics: h.topics)
            try await Task.sleep(for: .milliseconds(300))
        }
        try await eventually(15, "alice's enter stored and marked published") {
            (try? h.rows("SELECT count(*) FROM presence.events WHERE kind = 'enter' AND published_at IS NOT NULL")) == ["1"]
        }
        #expect(try h.rows("SELECT count(*) FROM presence.sessions WHERE exited_at IS NULL") == ["1"])
        #expect(!aggregator.stderr.contains("permission denied"), "\(aggregator.stderr.suffix(2000))")
        await publisher.stop()
        await aggregator.stop()
        await bus.stop()
    }
}
