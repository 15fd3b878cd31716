import Foundation
import PresenceTestSupport
import Testing

/// The analysts' reports (migration v012 and `presencectl report`) against hand-computed figures,
/// the analyst role's access to them, their use of the indexes, and `--csv` on the query commands.
@Suite struct ReportsTests {
    /// Seven visits in a hall (booth-a, booth-b) and an annex (room-c). Alice moves from booth-a to
    /// booth-b at 10:10 (one instant, two sessions) and comes back to booth-a twice in the same
    /// hour; bob is still in the annex; carol comes again the next day.
    static func fixture(_ label: String) async throws -> PipelineHarness {
        let h = try PipelineHarness(label)
        try await h.ctlOKAsync("migrate")
        _ = try h.rows("""
            INSERT INTO presence.sessions (user_key, beacon_key, venue_key, device, entered_at, last_seen_at, exited_at, exit_reason, enter_event)
            SELECT u, b, v, 'ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1', e::timestamptz, COALESCE(x, e)::timestamptz, x::timestamptz,
                   CASE WHEN x IS NULL THEN NULL ELSE 'timeout' END, gen_random_uuid()
            FROM (VALUES ('alice', 'booth-a', 'hall', '2026-01-05 10:00Z', '2026-01-05 10:10Z'),
                         ('alice', 'booth-b', 'hall', '2026-01-05 10:10Z', '2026-01-05 10:40Z'),
                         ('alice', 'booth-a', 'hall', '2026-01-05 10:45Z', '2026-01-05 10:50Z'),
                         ('alice', 'booth-a', 'hall', '2026-01-05 11:05Z', '2026-01-05 11:06Z'),
                         ('bob', 'booth-a', 'hall', '2026-01-05 10:05Z', '2026-01-05 10:25Z'),
                         ('bob', 'room-c', 'annex', '2026-01-05 12:00Z', NULL),
                         ('carol', 'booth-a', 'hall', '2026-01-05 10:30Z', '2026-01-05 12:30Z'),
                         ('carol', 'booth-b', 'hall', '2026-01-06 09:00Z', '2026-01-06 09:20Z')) AS f (u, b, v, e, x)
            """)
        return h
    }

    @Test func dwellIsTheMedianAndP90OfClosedVisitsByPercentileCont() async throws {
        let h = try await Self.fixture("dwell")
        // booth-a's closed visits: 60, 300, 600, 1200, 7200 s. percentile_cont: median 600,
        // p90 at rank 3.6 = 1200 + 0.6 × 6000 = 4800 (percentile_disc would say 7200).
        // booth-b: 1800 and 1200 s: median 1500 (disc: 1200), p90 1740. room-c: only an open visit.
        let expected = [
            #"{"beacon":"booth-a","venue":"hall","visits":5,"visitors":3,"median_dwell":600,"p90_dwell":4800,"mean_dwell":1872}"#,
            #"{"beacon":"booth-b","venue":"hall","visits":2,"visitors":2,"median_dwell":1500,"p90_dwell":1740,"mean_dwell":1500}"#,
        ]
        #expect(FixtureDay.lines(try await h.ctlOKAsync("report", "dwell", "--json")) == expected)
        #expect(FixtureDay.lines(try await h.ctlOKAsync("report", "dwell", "--json", "--beacon", "booth-b")) == [expected[1]])
        #expect(FixtureDay.lines(try await h.ctlOKAsync("report", "dwell", "--json", "--from", "2026-01-05T10:30Z", "--to", "2026-01-06")) == [
            #"{"beacon":"booth-a","venue":"hall","visits":3,"visitors":2,"median_dwell":300,"p90_dwell":5820,"mean_dwell":2520}"#,
        ], "the visits that began in the range: 10:30, 10:45, 11:05")
        #expect(try h.rows("SELECT beacon_key, visits, median_dwell_seconds, p90_dwell_seconds FROM presence.dwell_v ORDER BY 1")
            == ["booth-a|5|600|4800", "booth-b|2|1500|1740"])
        let table = try await h.ctlOKAsync("report", "dwell")
        #expect(table.contains("booth-a") && table.contains("10m 00s") && table.contains("1h 20m 00s"), "\(table)")
    }

    @Test func visitsPerHourAndPerDayCountEachVisitWhereItBegan() async throws {
        let h = try await Self.fixture("hourly")
        #expect(FixtureDay.lines(try await h.ctlOKAsync("report", "hourly", "--json")) == [
            #"{"beacon":"booth-a","venue":"hall","hour":\#(FixtureDay.at("10:00")),"visits":4,"unique_users":3}"#,
            #"{"beacon":"booth-b","venue":"hall","hour":\#(FixtureDay.at("10:00")),"visits":1,"unique_users":1}"#,
            #"{"beacon":"booth-a","venue":"hall","hour":\#(FixtureDay.at("11:00")),"visits":1,"unique_users":1}"#,
            #"{"beacon":"room-c","venue":"annex","hour":\#(FixtureDay.at("12:00")),"visits":1,"unique_users":1}"#,
            #"{"beacon":"booth-b","venue":"hall","hour":\#(FixtureDay.at("09:00", day: 1)),"visits":1,"unique_users":1}"#,
        ])
        #expect(FixtureDay.lines(try await h.ctlOKAsync("report", "daily", "--json")) == [
            #"{"beacon":"booth-a","venue":"hall","day":"2026-01-05","visits":5,"unique_users":3}"#,
            #"{"beacon":"booth-b","venue":"hall","day":"2026-01-05","visits":1,"unique_users":1}"#,
            #"{"beacon":"room-c","venue":"annex","day":"2026-01-05","visits":1,"unique_users":1}"#,
            #"{"beacon":"booth-b","venue":"hall","day":"2026-01-06","visits":1,"unique_users":1}"#,
        ])
        #expect(try await h.ctlOKAsync("report", "daily", "--csv", "--venue", "annex") == "beacon,venue,day,visits,unique_users\r\nroom-c,annex,2026-01-05,1,1\r\n")
        #expect(try h.rows("SELECT sum(visits), sum(unique_users) FROM presence.visits_hourly_v") == ["8|7"])
        #expect(try h.rows("SELECT sum(visits) FROM presence.visits_daily_v WHERE day = '2026-01-05'") == ["7"])
    }

    @Test func whoWasWhereTakesTheNewBeaconAtAMoveAndOpenVisitsUntilNow() async throws {
        let h = try await Self.fixture("where")
        #expect(FixtureDay.lines(try await h.ctlOKAsync("report", "where", "--at", "2026-01-05T10:10:00Z", "--json")) == [
            #"{"user":"bob","beacon":"booth-a","venue":"hall","entered":\#(FixtureDay.at("10:05")),"exited":\#(FixtureDay.at("10:25"))}"#,
            #"{"user":"alice","beacon":"booth-b","venue":"hall","entered":\#(FixtureDay.at("10:10")),"exited":\#(FixtureDay.at("10:40"))}"#,
        ])
        #expect(FixtureDay.lines(try await h.ctlOKAsync("report", "where", "--at", "2026-01-05T13:15:00+01:00", "--json")) == [
            #"{"user":"carol","beacon":"booth-a","venue":"hall","entered":\#(FixtureDay.at("10:30")),"exited":\#(FixtureDay.at("12:30"))}"#,
            #"{"user":"bob","beacon":"room-c","venue":"annex","entered":\#(FixtureDay.at("12:00")),"exited":null}"#,
        ])
        #expect(FixtureDay.lines(try await h.ctlOKAsync("report", "where", "--at", "2026-01-06 09:10", "--venue", "hall", "--json")) == [
            #"{"user":"carol","beacon":"booth-b","venue":"hall","entered":\#(FixtureDay.at("09:00", day: 1)),"exited":\#(FixtureDay.at("09:20", day: 1))}"#,
        ])
        #expect(try h.rows("SELECT user_key FROM presence.who_was_where(now() + interval '1 year')") == ["bob"])
        #expect(try h.rows("SELECT count(*) FROM presence.who_was_where('2026-01-05 09:59:59Z')") == ["0"])
    }

    @Test func pathsListEachUsersVisitsPerDayInOrder() async throws {
        let h = try await Self.fixture("paths")
        func step(_ beacon: String, _ from: String, _ to: String?, day: Int64 = 0) -> String {
            #"{"beacon":"\#(beacon)","entered":\#(FixtureDay.at(from, day: day)),"exited":\#(to.map { String(FixtureDay.at($0, day: day)) } ?? "null")}"#
        }
        #expect(FixtureDay.lines(try await h.ctlOKAsync("report", "paths", "--day", "2026-01-05", "--json")) == [
            #"{"user":"alice","day":"2026-01-05","visits":4,"path":["#
                + [step("booth-a", "10:00", "10:10"), step("booth-b", "10:10", "10:40"), step("booth-a", "10:45", "10:50"),
                   step("booth-a", "11:05", "11:06")].joined(separator: ",") + "]}",
            #"{"user":"bob","day":"2026-01-05","visits":2,"path":["# + step("booth-a", "10:05", "10:25") + "," + step("room-c", "12:00", nil) + "]}",
            #"{"user":"carol","day":"2026-01-05","visits":1,"path":["# + step("booth-a", "10:30", "12:30") + "]}",
        ])
        #expect(FixtureDay.lines(try await h.ctlOKAsync("report", "paths", "--user", "carol")) == [
            "USER   DAY         VISITS  PATH (UTC)",
            "carol  2026-01-05  1       booth-a 10:30–12:30",
            "carol  2026-01-06  1       booth-b 09:00–09:20",
        ])
        #expect(RFC4180.records(try await h.ctlOKAsync("report", "paths", "--user", "bob", "--csv")) == [
            ["user", "day", "step", "beacon", "entered", "exited"],
            ["bob", "2026-01-05", "1", "booth-a", "2026-01-05T10:05:00.000Z", "2026-01-05T10:25:00.000Z"],
            ["bob", "2026-01-05", "2", "room-c", "2026-01-05T12:00:00.000Z", ""],
        ])
        #expect(try h.rows("SELECT user_key, day, path, visits FROM presence.user_paths_v WHERE user_key = 'alice'")
            == ["alice|2026-01-05|{booth-a,booth-b,booth-a,booth-a}|4"])
    }

    @Test func busiestHoursCountAMoveOnceAndTheTimeEachUserSpent() async throws {
        let h = try await Self.fixture("busiest")
        // 10:00–11:00 in the hall: alice 10:00–10:40 (her move at 10:10 is one person, not two)
        // and 10:45–10:50, bob 10:05–10:25, carol from 10:30: at most 2 at once, 95 person-minutes.
        #expect(FixtureDay.lines(try await h.ctlOKAsync("report", "busiest", "--from", "2026-01-05", "--to", "2026-01-07", "--venue", "hall", "--top", "0", "--json")) == [
            #"{"venue":"hall","hour":\#(FixtureDay.at("10:00")),"peak_users":2,"mean_users":1.58}"#,
            #"{"venue":"hall","hour":\#(FixtureDay.at("11:00")),"peak_users":2,"mean_users":1.02}"#,
            #"{"venue":"hall","hour":\#(FixtureDay.at("12:00")),"peak_users":1,"mean_users":0.5}"#,
            #"{"venue":"hall","hour":\#(FixtureDay.at("09:00", day: 1)),"peak_users":1,"mean_users":0.33}"#,
        ])
        // Each venue's busiest hour; bob's open visit counts until the range ends.
        #expect(FixtureDay.lines(try await h.ctlOKAsync("report", "busiest", "--from", "2026-01-05", "--to", "2026-01-07", "--top", "1", "--json")) == [
            #"{"venue":"annex","hour":\#(FixtureDay.at("12:00")),"peak_users":1,"mean_users":1}"#,
            #"{"venue":"hall","hour":\#(FixtureDay.at("10:00")),"peak_users":2,"mean_users":1.58}"#,
        ])
        #expect(try h.rows("SELECT count(*) FROM presence.busiest('2026-01-05', '2026-01-07') WHERE venue_key = 'annex'") == ["36"])
        #expect(try h.rows("SELECT count(*), min(venue_key), max(peak_users) FROM presence.busiest('2026-01-05', '2026-01-07', venue => 'hall')") == ["4|hall|2"])
        #expect(try h.rows("SELECT max(peak_users) FROM presence.busiest_v WHERE venue_key = 'hall'") == ["2"])
    }

    @Test func theAnalystReadsEveryReportButNoDevice() async throws {
        let h = try await Self.fixture("analystreports")
        let analyst = try DatabaseRolesTests.login("presence_analyst", on: h.databaseURL)
        for (sql, expected) in [
            ("SELECT count(*) FROM presence.dwell_v", "2"), ("SELECT count(*) FROM presence.visits_hourly_v", "5"),
            ("SELECT count(*) FROM presence.visits_daily_v", "4"), ("SELECT count(*) FROM presence.user_paths_v", "4"),
            ("SELECT max(peak_users) FROM presence.busiest_v WHERE venue_key = 'hall'", "2"),
            ("SELECT count(*) FROM presence.who_was_where('2026-01-05 10:10Z')", "2"),
            ("SELECT count(*) FROM presence.dwell('2026-01-05', '2026-01-06')", "2"),
            ("SELECT count(*) FROM presence.visits_hourly('2026-01-06')", "1"), ("SELECT count(*) FROM presence.visits_daily(to_at => '2026-01-06')", "3"),
            ("SELECT count(*) FROM presence.user_paths('2026-01-06')", "1"), ("SELECT count(*) FROM presence.busiest('2026-01-05', '2026-01-06')", "15"),
        ] {
            let result = DatabaseRolesTests.attempt(analyst, sql)
            #expect(result.rows == [expected], "analyst: \(sql) → \(result)")
        }
        let columns = try h.rows("""
            SELECT table_name || '.' || column_name FROM information_schema.columns
            WHERE table_schema = 'presence' AND table_name IN ('dwell_v', 'visits_hourly_v', 'visits_daily_v', 'user_paths_v', 'busiest_v')
            """)
        #expect(columns.count == 27)
        #expect(columns.filter { $0.contains("device") || $0.contains("identity") }.isEmpty, "\(columns)")
        let result = DatabaseRolesTests.attempt(analyst, "SELECT device FROM presence.sessions")
        #expect(result.rows == nil && result.error.contains("permission denied"))
    }

    /// Each report with a time range (or a time) reaches its index: with sequential scans
    /// priced out, the plan names the index, which it could not if the condition were not sargable.
    /// Sessions are partitioned by month: each partition has the index under a name that ends with
    /// its columns (sessions_entered is sessions_2026_01_entered_at_idx in January 2026).
    static let plans: [(String, String)] = [
        ("SELECT * FROM presence.dwell(now() - interval '7 days')", "_entered_at_idx"),
        ("SELECT * FROM presence.dwell(now() - interval '7 days') WHERE beacon_key = 'booth-a'", "_beacon_key_entered_at_idx"),
        ("SELECT * FROM presence.visits_hourly('2026-01-05', '2026-01-06')", "_entered_at_idx"),
        ("SELECT * FROM presence.visits_daily('2026-01-05', '2026-01-06')", "_entered_at_idx"),
        ("SELECT * FROM presence.who_was_where('2026-01-05 10:10Z')", "_tstzrange_idx"),
        ("SELECT * FROM presence.user_paths('2026-01-05', '2026-01-06')", "_entered_at_idx"),
        ("SELECT * FROM presence.user_paths_v WHERE user_key = 'alice'", "_user_key_entered_at_idx"),
        ("SELECT * FROM presence.busiest('2026-01-05', '2026-01-06')", "_tstzrange_idx"),
        ("SELECT * FROM presence.busiest('2026-01-05', '2026-01-06', 'hall')", "_tstzrange_idx"),
    ]

    @Test func reportsOverARangeUseTheIndexes() async throws {
        let h = try await Self.fixture("plans")
        for (sql, index) in Self.plans {
            let plan = try h.rows("SET enable_seqscan = off; EXPLAIN \(sql)").joined(separator: "\n")
            #expect(plan.contains(index), "\(sql):\n\(plan)")
            #expect(!plan.contains("Seq Scan on sessions"), "\(sql):\n\(plan)")
            #expect(!plan.contains("Function Scan on dwell") && !plan.contains("Function Scan on busiest"), "inlined: \(plan)")
        }
    }

    @Test func everyQueryCommandWritesCSV() async throws {
        let h = try await Self.fixture("csv")
        try await h.ctlOKAsync("venue", "add", "hall")
        try await h.ctlOKAsync("node", "add", "scan-1", "--venue", "hall", "--x", "1.5", "--y", "2")
        let sessions = try #require(RFC4180.records(try await h.ctlOKAsync("sessions", "--user", "bob", "--csv")))
        #expect(sessions == [
            ["user", "beacon", "venue", "device", "entered", "exited", "reason", "dwell"],
            ["bob", "booth-a", "hall", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1", "2026-01-05T10:05:00.000Z", "2026-01-05T10:25:00.000Z",
             "timeout", "1200"],
            ["bob", "room-c", "annex", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1", "2026-01-05T12:00:00.000Z", "", "", sessions.last?.last ?? ""],
        ])
        #expect(RFC4180.records(try await h.ctlOKAsync("presence", "--csv"))?.map { $0.prefix(3) } == [["user", "beacon", "venue"], ["bob", "room-c", "annex"]])
        #expect(RFC4180.records(try await h.ctlOKAsync("visits", "--csv"))?.first == ["beacon", "bucket_start", "unique_users"])
        #expect(RFC4180.records(try await h.ctlOKAsync("visits", "--csv"))?.dropFirst().first == ["booth-a", "2026-01-05T10:00:00.000Z", "2"])
        #expect(RFC4180.records(try await h.ctlOKAsync("nodes", "--csv")) == [
            ["node", "venue", "beacon", "x", "y", "floor", "offset_db", "source", "fitted_offset_db", "links", "residual_db", "readings", "fitted_at"],
            ["scan-1", "hall", "", "1.5", "2", "", "0", "none", "", "", "", "", ""],
        ])
        for report in [["dwell"], ["hourly"], ["daily"], ["where", "--at", "2026-01-05T10:10Z"], ["paths"], ["busiest", "--since", "1000d"]] {
            let result = try await h.ctlAsync(["report"] + report + ["--csv"])
            #expect(result.status == 0 && (RFC4180.records(result.stdout)?.count ?? 0) > 1, "report \(report) --csv: \(result.stderr)")
        }
    }
}
