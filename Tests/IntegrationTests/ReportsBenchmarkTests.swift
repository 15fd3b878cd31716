import Testing

/// `presence-bench reports` on a small database, to keep the benchmark working; its figures at
/// 10 million sessions are measured by hand (see the README).
@Suite struct ReportsBenchmarkTests {
    @Test func theReportsBenchmarkRunsOnASmallDatabase() throws {
        let h = try PipelineHarness("reportsbench")
        let output = try runTool(try PackagePaths.executable("presence-bench"), ["reports", "--sessions", "20000", "--runs", "1", "--database", h.databaseURL])
        #expect(try h.rows("SELECT count(*), count(*) FILTER (WHERE exited_at IS NULL) > 0, count(DISTINCT beacon_key) FROM presence.sessions") == ["20000|t|300"])
        #expect(try h.rows("SELECT indexname FROM pg_indexes WHERE schemaname = 'presence' AND tablename = 'sessions' ORDER BY 1") == [
            "sessions_beacon_time", "sessions_during", "sessions_enter_event_key", "sessions_entered", "sessions_exit_event_key",
            "sessions_one_open_per_user", "sessions_pkey", "sessions_user_time",
        ], "every index is back after the load")
        let rows = FixtureDay.lines(output).filter { $0.hasPrefix("| ") && !$0.hasPrefix("| report") && !$0.hasPrefix("| generation") }
        #expect(rows.filter { $0.contains("sessions_during") }.count >= 3, "\(output)")
        #expect(output.contains("| busiest, all venues, last 7 days |"), "\(output)")
    }
}
