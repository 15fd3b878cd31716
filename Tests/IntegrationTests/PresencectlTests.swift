import Foundation
import PresenceCore
import PresencePostgres
import PresenceStore
import Testing

/// `presencectl` against a real database: registry commands, their refusals, and the queries.
@Suite struct PresencectlTests {
    static let uuid = "f7826da6-4fa2-4e98-8024-bc5b71e0893e"

    /// Every registry table and its rows, to show that a refused command changed nothing.
    static func dump(_ h: PipelineHarness) throws -> [String] {
        var rows: [String] = []
        for table in ["venues", "beacons", "beacon_neighbours", "nodes", "users", "devices"] {
            rows += try h.rows("SELECT '\(table)', t::text FROM presence.\(table) t ORDER BY 2")
        }
        return rows
    }

    static func seeded(_ label: String) async throws -> PipelineHarness {
        let h = try PipelineHarness(label)
        try await h.ctlOKAsync("migrate")
        try await h.ctlOKAsync("venue", "add", "lab")
        try await h.ctlOKAsync("beacon", "add", "desk-1", "--venue", "lab", "--id", "ibeacon:\(uuid):1:1")
        try await h.ctlOKAsync("node", "add", "scan-1", "--venue", "lab", "--beacon", "desk-1")
        try await h.ctlOKAsync("user", "add", "alice")
        try await h.ctlOKAsync("device", "add", "ibeacon:\(uuid):9:9", "--user", "alice")
        return h
    }

    /// Bad command lines, each with the value its one-line error must name.
    static let badInput: [([String], String)] = [
        (["beacon", "add", "Desk/9"], "Desk/9"),
        (["beacon", "add", "desk-9", "--id", "ibeacon:1234:1:1"], "1234"),
        (["beacon", "add", "desk-9", "--id", "ibeacon:\(uuid):70000"], "70000"),
        (["beacon", "add", "desk-9", "--id", "ibeacon:\(uuid):1:65536"], "65536"),
        (["beacon", "add", "desk-9", "--id", "node:scan-1"], "node:scan-1"),
        (["beacon", "add", "desk-9", "--venue", "nowhere"], "nowhere"),
        (["beacon", "add", "desk-9", "--x", "3"], "--x"),
        (["beacon", "add", "desk-9", "--radius", "-1"], "-1"),
        (["beacon", "add", "desk-9", "--tx", "40"], "40"),
        (["beacon", "add", "desk-9", "--id", "ibeacon:\(uuid):1:1"], "desk-1"),
        (["beacon", "add", "UPPER"], "UPPER"),
        (["venue", "add", "a+b"], "a+b"),
        (["node", "add", "scan-2", "--beacon", "nowhere"], "nowhere"),
        (["node", "add", "scan-2", "--venue", "Lab"], "Lab"),
        (["node", "add", "scan-2", "--rssi-offset", "99"], "99"),
        (["user", "add", "bob#1"], "bob#1"),
        (["user", "incognito", "nobody", "--for", "1h"], "nobody"),
        (["user", "incognito", "alice", "--for", "soon"], "soon"),
        (["user", "rm", "nobody"], "nobody"),
        (["device", "add", "ibeacon:\(uuid):1:2", "--user", "nobody"], "nobody"),
        (["device", "add", "ibeacon:\(uuid):1", "--user", "alice"], "ibeacon:\(uuid):1"),
        (["device", "add", "mac:zz:00:00:00:00:00", "--user", "alice"], "zz"),
        (["device", "add", "ibeacon:\(uuid):1:2", "--user", "alice", "--tx", "-200"], "-200"),
        (["device", "rm", "ibeacon:\(uuid):5:5"], "ibeacon:\(uuid):5:5"),
        (["venue", "rm", "lab"], "lab"),
        (["sessions", "--since", "yesterday"], "yesterday"),
        (["visits", "--bucket", "10s"], "10s"),
        (["beacon", "add", "desk-9", "--x", "abc", "--y", "1"], "abc"),
        (["beacon", "add", "desk-1", "--switch-margin", "-1"], "-1"),
        (["beacon", "add", "desk-1", "--switch-dwell", "soon"], "soon"),
        (["beacon", "add", "desk-1", "--absence-timeout", "0s"], "0s"),
        (["beacon", "add", "desk-1", "--absence-timeout", "3d"], "3d"),
        (["beacon", "add", "desk-1", "--next-to", "nowhere"], "nowhere"),
        (["beacon", "add", "desk-1", "--next-to", "desk-1"], "desk-1"),
        (["beacon", "add", "desk-1", "--next-to", "Desk-2"], "Desk-2"),
        (["beacon", "add", "desk-1", "--clear-policy", "--switch-margin", "3"], "--clear-policy"),
        (["calibrate", "/nonexistent.jsonl", "--user", "alice", "--at", "desk-1=10s..15s"], "desk-1=10s..15s"),
        (["calibrate", "/nonexistent.jsonl", "--user", "alice", "--at", "desk-1:10s..70s"], "desk-1:10s..70s"),
        (["calibrate", "/nonexistent.jsonl", "--user", "alice", "--at", "desk-1=10s..70s"], "/nonexistent.jsonl"),
        (["presence", "--json", "--csv"], "--csv"),
        (["sessions", "--csv", "--json"], "--csv"),
        (["visits", "--json", "--csv"], "--csv"),
        (["nodes", "--json", "--csv"], "--csv"),
        (["report", "dwell", "--json", "--csv"], "--csv"),
        (["calibrate", "/nonexistent.jsonl", "--user", "alice", "--at", "desk-1=10s..70s", "--json", "--csv"], "--csv"),
        (["visits", "--chart", "visits.jpg"], "visits.jpg"),
        (["report", "where", "--at", "noon"], "noon"),
        (["report", "where", "--at", "2026-11-22T10:00Z", "--user", "Alice"], "Alice"),
        (["report", "paths", "--day", "2026-02-30"], "2026-02-30"),
        (["report", "paths", "--day", "2026-01-05", "--since", "1d"], "--day"),
        (["report", "dwell", "--since", "7d", "--from", "2026-01-01"], "2026-01-01"),
        (["report", "hourly", "--from", "2026-01-02", "--to", "2026-01-01"], "--to"),
        (["report", "daily", "--since", "a week"], "a week"),
        (["report", "dwell", "--beacon", "Booth"], "Booth"),
        (["report", "busiest", "--top=-1"], "-1"),
    ]

    @Test(arguments: badInput)
    func badInputIsRefusedInOneLineNamingTheValueAndChangesNothing(_ arguments: [String], _ named: String) async throws {
        let h = try await Self.seeded("cli")
        let before = try Self.dump(h)
        let result = try await h.ctlAsync(arguments)
        #expect(result.status != 0, "presencectl \(arguments.joined(separator: " ")) succeeded")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "stderr: \(result.stderr)")
        #expect(result.stderr.contains(named), "stderr does not name \(named): \(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try Self.dump(h) == before)
    }

    @Test func addUpdatesGivenFieldsAndKeepsTheRest() async throws {
        let h = try await Self.seeded("upsert")
        try await h.ctlOKAsync("beacon", "add", "desk-1", "--radius", "2.5", "--name", "Desk one")
        #expect(try h.rows("SELECT venue_key, identity, radius, name FROM presence.beacons") == ["lab|ibeacon:\(Self.uuid):1:1|2.5|Desk one"])
        try await h.ctlOKAsync("device", "add", "IBEACON:\(Self.uuid.uppercased()):09:9", "--user", "alice", "--tx", "-61")
        #expect(try h.rows("SELECT identity, user_key, tx FROM presence.devices") == ["ibeacon:\(Self.uuid):9:9|alice|-61"])
        try await h.ctlOKAsync("node", "add", "scan-1", "--rssi-offset", "-3")
        try await h.ctlOKAsync("node", "add", "scan-1", "--x", "1", "--y", "2")
        #expect(try h.rows("SELECT beacon_key, x, y, rssi_offset FROM presence.nodes") == ["desk-1|1|2|-3"])
    }

    @Test func beaconPoliciesAndNeighboursAreStoredMutuallyAndLoaded() async throws {
        let h = try await Self.seeded("policies")
        try await h.ctlOKAsync("beacon", "add", "door", "--venue", "lab")
        try await h.ctlOKAsync("beacon", "add", "hall", "--venue", "lab")
        try await h.ctlOKAsync("beacon", "add", "desk-1", "--switch-margin", "8", "--switch-dwell", "5s", "--absence-timeout", "1m",
                    "--next-to", "hall,door")
        try await h.ctlOKAsync("beacon", "add", "door", "--next-to", "desk-1", "--absence-timeout", "4s")
        #expect(try h.rows("SELECT key, switch_margin, switch_dwell_ms, absence_timeout_ms FROM presence.beacons ORDER BY 1")
            == ["desk-1|8|5000|60000", "door|||4000", "hall|||"])
        #expect(try h.rows("SELECT beacon_key, neighbour_key FROM presence.beacon_neighbours ORDER BY 1, 2") == ["desk-1|door", "desk-1|hall"])
        let db = try await PostgresConnection.connect(PostgresConfiguration(url: h.databaseURL), logger: PostgresTestSupport.quietLogger)
        let registry = try await db.loadRegistry()
        await db.close()
        #expect(registry.beacons["desk-1"]?.nextTo == ["door", "hall"])
        #expect(registry.beacons["hall"]?.nextTo == ["desk-1"])
        #expect(registry.beacons["desk-1"]?.switchDwell == 5_000)
        try await h.ctlOKAsync("beacon", "add", "desk-1", "--not-next-to", "door", "--clear-policy", "--name", "Desk")
        #expect(try h.rows("SELECT key, switch_margin, switch_dwell_ms, absence_timeout_ms, name FROM presence.beacons WHERE key = 'desk-1'")
            == ["desk-1||||Desk"])
        #expect(try h.rows("SELECT beacon_key, neighbour_key FROM presence.beacon_neighbours") == ["desk-1|hall"])
        try await h.ctlOKAsync("beacon", "rm", "hall")
        #expect(try h.rows("SELECT count(*) FROM presence.beacon_neighbours") == ["0"])
    }

    @Test func migrateIsIdempotentAndTheDatabaseAllowsOneOpenSessionPerUser() async throws {
        let h = try await Self.seeded("migrate")
        #expect(try await h.ctlOKAsync("migrate").contains("up to date"))
        #expect(try h.rows("SELECT version FROM presence.migrations ORDER BY 1") == Migration.all.map { String($0.version) })
        let insert = """
            INSERT INTO presence.sessions (user_key, beacon_key, device, entered_at, last_seen_at, enter_event)
            VALUES ('alice', 'desk-1', 'x', now(), now(), gen_random_uuid())
            """
        _ = try h.rows(insert)
        #expect(throws: TestSetupError.self) { _ = try h.rows(insert) }
    }

    @Test func removingAndIncognito() async throws {
        let h = try await Self.seeded("rm")
        #expect(try await h.ctlAsync("venue", "rm", "lab").status != 0)
        try await h.ctlOKAsync("user", "incognito", "alice", "--for", "2h")
        let until = try h.rows("SELECT incognito_until > now() + interval '119 minutes' FROM presence.users WHERE key = 'alice'")
        #expect(until == ["t"])
        try await h.ctlOKAsync("user", "incognito", "alice", "--off")
        #expect(try h.rows("SELECT incognito_until IS NULL FROM presence.users") == ["t"])
        try await h.ctlOKAsync("beacon", "rm", "desk-1")
        #expect(try h.rows("SELECT beacon_key IS NULL FROM presence.nodes") == ["t"])
        try await h.ctlOKAsync("user", "rm", "alice")
        #expect(try h.rows("SELECT count(*) FROM presence.devices") == ["0"])
        try await h.ctlOKAsync("node", "rm", "scan-1")
        try await h.ctlOKAsync("venue", "rm", "lab")
        #expect(try Self.dump(h).isEmpty)
    }

    @Test func queriesPrintTablesAndJSON() async throws {
        let h = try await Self.seeded("queries")
        _ = try h.rows("""
            INSERT INTO presence.sessions (user_key, beacon_key, venue_key, device, entered_at, last_seen_at, exited_at, exit_reason, enter_event)
            VALUES ('alice', 'desk-1', 'lab', 'd', '2026-01-01 10:00:00+00', '2026-01-01 10:40:00+00', '2026-01-01 10:40:00+00', 'timeout', gen_random_uuid()),
                   ('alice', 'desk-1', 'lab', 'd', now() - interval '5 minutes', now(), NULL, NULL, gen_random_uuid())
            """)
        let presence = try await h.ctlOKAsync("presence", "--json")
        #expect(presence.contains(#""user":"alice","beacon":"desk-1","venue":"lab""#))
        let sessions = try await h.ctlOKAsync("sessions", "--user", "alice", "--json").split(separator: "\n")
        #expect(sessions.count == 2)
        #expect(sessions.first?.contains(#""entered":1767261600000,"exited":1767264000000,"reason":"timeout","dwell":2400"#) == true)
        #expect(try await h.ctlOKAsync("sessions", "--since", "1h", "--json").split(separator: "\n").count == 1)
        let visits = try await h.ctlOKAsync("visits", "--json").split(separator: "\n")
        #expect(visits.count == 2)
        #expect(visits.first == #"{"beacon":"desk-1","bucket_start":1767261600000,"unique_users":1}"#)
        let present = try await h.ctlOKAsync("visits", "--present", "--json").split(separator: "\n")
        #expect(present.prefix(2) == [#"{"beacon":"desk-1","bucket_start":1767261600000,"unique_users":1}"#,
                                      #"{"beacon":"desk-1","bucket_start":1767263400000,"unique_users":1}"#])
        #expect(try h.rows("SELECT count(*) FROM presence.visits_30m_v WHERE bucket_start < '2026-01-02'") == ["1"])
        #expect(try h.rows("SELECT count(*) FROM presence.occupancy_30m_v WHERE bucket_start < '2026-01-02'") == ["2"])
        #expect(try await h.ctlOKAsync("presence").contains("alice"))

        // Bob walks past desk-1 in 8 s: a visit while the venue counts every stay (the default), a
        // session but no visit under a 15 s minimum, a visit again under 5 s.
        _ = try h.rows("""
            INSERT INTO presence.sessions (user_key, beacon_key, venue_key, device, entered_at, last_seen_at, exited_at, exit_reason, enter_event)
            VALUES ('bob', 'desk-1', 'lab', 'e', '2026-01-01 10:05:00+00', '2026-01-01 10:05:08+00', '2026-01-01 10:05:08+00', 'moved', gen_random_uuid())
            """)
        let walkBy = #"{"beacon":"desk-1","bucket_start":1767261600000,"unique_users":2}"#
        #expect(try await h.ctlOKAsync("visits", "--json").split(separator: "\n").first == Substring(walkBy), "every stay counts by default")
        _ = try h.rows("UPDATE presence.settings SET visit_min_dwell = interval '15 seconds'")
        #expect(try await h.ctlOKAsync("visits", "--json").split(separator: "\n").first == visits.first, "a walk-by is not a visit")
        #expect(try h.rows("SELECT unique_users FROM presence.visits_30m_v WHERE bucket_start < '2026-01-02'") == ["1"])
        #expect(try h.rows("SELECT sum(visits) FROM presence.visits_hourly('2026-01-01', '2026-01-02')") == ["1"])
        #expect(try await h.ctlOKAsync("visits", "--present", "--json").split(separator: "\n").first == Substring(walkBy), "present counts everyone")
        _ = try h.rows("UPDATE presence.settings SET visit_min_dwell = interval '5 seconds'")
        #expect(try await h.ctlOKAsync("visits", "--json").split(separator: "\n").first == Substring(walkBy))
        #expect(try h.rows("SELECT sum(visits) FROM presence.visits_hourly('2026-01-01', '2026-01-02')") == ["2"])
    }

    @Test func calibrateFindsEachNodesOffsetFromARecordedWalkAndAppliesIt() async throws {
        let h = try await Self.seeded("calibrate")
        try await h.ctlOKAsync("beacon", "add", "desk-2", "--venue", "lab")
        try await h.ctlOKAsync("node", "add", "scan-2", "--venue", "lab", "--beacon", "desk-2", "--rssi-offset", "7")
        let tag = "ibeacon:\(Self.uuid):9:9"
        // Alice stands at desk-1 from 10 s to 70 s (scan-1 reads -60 dBm of her tag, 2 dB hot)
        // and at desk-2 from 100 s to 160 s (scan-2 reads -64 dBm, 2 dB cold).
        let t0: Int64 = 1_767_261_600_000
        var lines = [#"{"received":\#(t0),"topic":"presence/v1/nodes/scan-1/status","v":1,"state":"online"}"#]
        for second in stride(from: Int64(1), through: 170, by: 1) {
            let time = t0 + second * 1_000
            for (node, rssi) in [("scan-1", (10 ... 70).contains(second) ? -60 : -90), ("scan-2", (100 ... 160).contains(second) ? -64 : -90)] {
                lines.append(#"{"received":\#(time + 40),"topic":"presence/v1/sightings/\#(node)","v":1,"node":"\#(node)","seq":\#(second),"sent":\#(time),"#
                             + #""sightings":[{"ts":\#(time),"id":"\#(tag)","rssi":\#(rssi),"tx":-59}]}"#)
            }
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("walk-\(h.prefix).jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }

        let table = try await h.ctlOKAsync("calibrate", file.path, "--user", "alice", "--at", "desk-1=10s..70s", "--at", "desk-2=100s..160s")
        #expect(table.contains("NODE"), "\(table)")
        #expect(try h.rows("SELECT key, rssi_offset FROM presence.nodes ORDER BY 1") == ["scan-1|0", "scan-2|7"], "nothing applied without --apply")

        let applied = try await h.ctlAsync("calibrate", file.path, "--device", tag, "--at", "desk-1=10s..70s", "--at", "desk-2=100s..160s", "--apply", "--json")
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(applied.stdout.split(separator: "\n") == [
            #"{"node":"scan-1","beacon":"desk-1","readings":51,"median_path_loss_db":1,"spread_db":0,"calibrated":true,"offset_db":-2}"#,
            #"{"node":"scan-2","beacon":"desk-2","readings":51,"median_path_loss_db":5,"spread_db":0,"calibrated":true,"offset_db":2}"#,
        ])
        #expect(try h.rows("SELECT key, rssi_offset, pinned FROM presence.nodes ORDER BY 1") == ["scan-1|-2|t", "scan-2|2|t"], "applied and pinned")

        // One stay cut short: scan-2 has 4 readings; no node can be compared, nothing changes.
        let short = try await h.ctlAsync("calibrate", file.path, "--user", "alice", "--at", "desk-1=10s..70s", "--at", "desk-2=100s..114s", "--apply")
        #expect(short.status != 0)
        #expect(short.stdout.contains("not calibrated: 5 readings, 20 needed"), "\(short.stdout)")
        #expect(short.stderr.split(separator: "\n").count == 1 && short.stderr.contains("at least 2"), "\(short.stderr)")
        #expect(try h.rows("SELECT key, rssi_offset FROM presence.nodes ORDER BY 1") == ["scan-1|-2", "scan-2|2"])

        for (arguments, named) in [(["--device", "ibeacon:\(Self.uuid):1:7", "--at", "desk-1=10s..70s"], "ibeacon:\(Self.uuid):1:7"),
                                   (["--user", "alice", "--at", "desk-9=10s..70s"], "desk-9"),
                                   (["--user", "bob", "--at", "desk-1=10s..70s"], "bob")] {
            let refused = try await h.ctlAsync(["calibrate", file.path] + arguments)
            #expect(refused.status != 0 && refused.stdout.isEmpty && refused.stderr.split(separator: "\n").count == 1)
            #expect(refused.stderr.contains(named), "\(refused.stderr)")
        }
    }
}
