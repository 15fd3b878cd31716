import Testing

/// `presence-bench reports` on a small database, to keep the benchmark working; its figures at
/// 10 million sessions are measured by hand (see the README).
@Suite struct ReportsBenchmarkTests {
    @Test func theReportsBenchmarkRunsOnASmallDatabase() async throws {
        let h = try PipelineHarness("reportsbench")
        let output = try await runTool(try PackagePaths.executable("presence-bench"), ["reports", "--sessions", "20000", "--runs", "1", "--database", h.databaseURL])
        #expect(try h.rows("SELECT count(*), count(*) FILTER (WHERE exited_at IS NULL) > 0, count(DISTINCT beacon_key) FROM presence.sessions") == ["20000|t|300"])
        #expect(try h.rows("SELECT indexname FROM pg_indexes WHERE schemaname = 'presence' AND tablename = 'sessions' ORDER BY 1") == [
            "sessions_beacon_time", "sessions_during", "sessions_enter_event", "sessions_entered", "sessions_user_time",
        ], "every index is back after the load")
        #expect(try h.rows("""
            SELECT count(*) FROM pg_index x JOIN pg_inherits i ON i.inhrelid = x.indexrelid
            WHERE i.inhparent = 'presence.sessions_during'::regclass AND x.indisvalid
            """) == (try h.rows("SELECT count(*) FROM pg_inherits WHERE inhparent = 'presence.sessions'::regclass")), "on every partition")
        #expect(try h.rows("SELECT count(*) FROM presence.sessions_default WHERE exited_at IS NOT NULL") == ["0"], "closed sessions in their months")
        let rows = FixtureDay.lines(output).filter { $0.hasPrefix("| ") && !$0.hasPrefix("| report") && !$0.hasPrefix("| generation") }
        #expect(rows.filter { $0.contains("sessions_during") }.count >= 3, "\(output)")
        #expect(output.contains("| busiest, all venues, last 7 days |"), "\(output)")
    }
}
