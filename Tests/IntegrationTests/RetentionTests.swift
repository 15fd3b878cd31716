import Foundation
import PresenceCore
import Testing

/// History past its retention goes, and nothing else: not open sessions, not events still waiting
/// to be published, not what is younger than the setting.
@Suite struct RetentionTests {
    /// Sessions, zone sessions, events and notifications of every age and state, labelled by the user key.
    static func seeded(_ label: String) async throws -> PipelineHarness {
        let h = try PipelineHarness(label)
        try await h.ctlOKAsync("migrate")
        let sessions: [(String, String, String?)] = [
            ("closed-200d", "200 days", "200 days"), ("closed-10d", "11 days", "10 days"), ("open-300d", "300 days", nil),
            ("closed-179d", "180 days", "179 days"),
        ]
        for (user, entered, exited) in sessions {
            let exit = exited.map { "now() - interval '\($0)', 'timeout'" } ?? "NULL, NULL"
            _ = try h.rows("""
                INSERT INTO presence.sessions (user_key, beacon_key, device, entered_at, last_seen_at, exited_at, exit_reason, enter_event)
                VALUES ('\(user)', 'desk-1', 'x', now() - interval '\(entered)', now() - interval '\(entered)', \(exit), gen_random_uuid())
                """)
        }
        for (user, entered, exited) in sessions {
            let exit = exited.map { "now() - interval '\($0)', 'timeout'" } ?? "NULL, NULL"
            _ = try h.rows("""
                INSERT INTO presence.zone_sessions (user_key, zone_key, device, entered_at, exited_at, exit_reason, enter_event)
                VALUES ('\(user)', 'office', 'x', now() - interval '\(entered)', \(exit), gen_random_uuid())
                """)
        }
        let events: [(String, String, Bool)] = [("published-40d", "40 days", true), ("unpublished-40d", "40 days", false), ("published-1d", "1 day", true)]
        for (user, age, published) in events {
            _ = try h.rows("""
                INSERT INTO presence.events (id, kind, user_key, beacon_key, at, payload, published_at)
                VALUES (gen_random_uuid(), 'enter', '\(user)', 'desk-1', now() - interval '\(age)', '{}', \(published ? "now() - interval '\(age)'" : "NULL"))
                """)
        }
        for (user, age) in [("sent-40d", "40 days"), ("sent-1d", "1 day")] {
            _ = try h.rows("""
                INSERT INTO presence.notifications (user_key, beacon_key, kind, message, sent_at) VALUES ('\(user)', 'desk-1', 'hello', 'm', now() - interval '\(age)')
                """)
        }
        return h
    }

    static func left(_ h: PipelineHarness) throws -> [String] {
        try h.rows("""
            SELECT 'session ' || user_key FROM presence.sessions UNION ALL SELECT 'event ' || user_key FROM presence.events
            UNION ALL SELECT 'zone session ' || user_key FROM presence.zone_sessions
            UNION ALL SELECT 'notification ' || user_key FROM presence.notifications ORDER BY 1
            """)
    }

    @Test func purgeRemovesWhatIsOlderThanTheSettingAndNothingElse() async throws {
        let h = try await Self.seeded("purge")
        #expect(try await h.ctlOKAsync("purge").contains("purged 1 sessions, 1 zone sessions, 1 events and 1 notifications"))
        let zones = ["zone session closed-10d", "zone session closed-179d", "zone session open-300d"]
        #expect(try Self.left(h) == [
            "event published-1d", "event unpublished-40d", "notification sent-1d",
            "session closed-10d", "session closed-179d", "session open-300d",
        ] + zones)
        #expect(try await h.ctlOKAsync("purge").contains("purged 0 sessions, 0 zone sessions, 0 events and 0 notifications"), "a second purge finds nothing")
        #expect(try await h.ctlOKAsync("purge", "--keep-sessions", "forever", "--keep-events", "12h")
            .contains("purged 0 sessions, 0 zone sessions, 1 events and 1 notifications"))
        #expect(try Self.left(h) == ["event unpublished-40d", "session closed-10d", "session closed-179d", "session open-300d"] + zones)
    }

    @Test func theAggregatorPurgesAtStartWithItsOwnSettings() async throws {
        let h = try await Self.seeded("keep")
        let aggregator = try h.startAggregator(["--keep-sessions", "5d", "--keep-events", "forever"])
        // The aggregator also closes the open session of a user the registry does not know, which writes
        // its exit event ("event open-300d"); the purge and that close may come in either order.
        try await eventually(20, "the aggregator's purge and its closing of the unknown user's session") {
            (try? h.rows("SELECT count(*) FROM presence.sessions")) == ["1"] && (try? h.rows("SELECT count(*) FROM presence.zone_sessions")) == ["1"]
                && (try? h.rows("SELECT count(*) FROM presence.events WHERE user_key = 'open-300d'")) == ["1"]
        }
        let left = try Self.left(h)
        #expect(left == [
            "event open-300d", "event published-1d", "event published-40d", "event unpublished-40d", "notification sent-1d", "notification sent-40d",
            "session open-300d", "zone session open-300d",
        ], "\(left)")
        #expect(aggregator.stderr.contains("purged history past its retention"))
        await aggregator.stop()
    }

    @Test func theAggregatorKeepsRunningWhenItKeepsEverything() async throws {
        let h = try await Self.seeded("forever")
        let bus = try await h.recorder()
        let aggregator = try h.startAggregator(["--keep-sessions", "forever", "--keep-events", "forever"])
        try await bus.wait(20, for: "online") { _ in bus.objects(on: h.topics.aggregatorStatus).last?["state"] as? String == "online" }
        #expect(await aggregator.wait(timeout: .seconds(3)) == nil, "the aggregator stopped by itself: \(aggregator.stderr.suffix(400))")
        #expect(await aggregator.stop() == 0)
        await bus.stop()
        let left = try Self.left(h)
        #expect(["session closed-200d", "zone session closed-200d", "event published-40d", "notification sent-40d"].allSatisfy(left.contains),
                "history was purged while everything is kept: \(left)")
    }

    @Test(arguments: [(["--keep-events", "10s"], "10s"), (["--keep-sessions", "long"], "long"), (["--keep-sessions", "200y"], "200y")])
    func badSettingsAreRefusedInOneLine(_ arguments: [String], _ named: String) async throws {
        let h = try PipelineHarness("keepflags")
        let result = try await h.ctlAsync(["purge"] + arguments)
        #expect(result.status != 0)
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(named), "\(result.stderr)")
    }
}
