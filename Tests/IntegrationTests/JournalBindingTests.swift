import Foundation
import PresenceCore
import PresenceMQTT
import Testing

/// The journal belongs to one database: started against another one with the same client id and
/// state folder, the aggregator moves the old journal aside and decides nothing from it; started
/// against a copy of its own database (a restored backup), it carries on and fills in what the copy
/// lacks.
@Suite struct JournalBindingTests {
    /// Runs an aggregator for `h` until alice, heard at node-a, has an open session in its database.
    static func aliceEnters(_ h: PipelineHarness) async throws {
        let bus = try await h.recorder()
        let aggregator = try h.startAggregator()
        try await bus.wait(20, for: "online") { _ in bus.objects(on: h.topics.aggregatorStatus).last?["state"] as? String == "online" }
        let publisher = try await h.publisher()
        let people = EndToEndTests.AggregatorOutageTests.Whereabouts()
        let done = Flag()
        people.put(EndToEndTests.AggregatorWalkTests.tag, at: "node-a")
        let walking = EndToEndTests.AggregatorOutageTests.walk(publisher, h, people, while: { !done.isSet })
        try await eventually(20, "alice's session at booth-a") {
            (try? h.rows("SELECT beacon_key FROM presence.sessions WHERE exited_at IS NULL")) == ["booth-a"]
        }
        done.set()
        _ = try? await walking.value
        await publisher.stop()
        #expect(await aggregator.stop() == 0)
        await bus.stop()
    }

    @Test func aJournalLeftByAnotherDatabaseChangesNothingInAFreshOne() async throws {
        let first = try PipelineHarness("journal-first")
        try EndToEndTests.AggregatorWalkTests.register(first)
        try await Self.aliceEnters(first)

        // Another database, the same client id and state folder (as a re-created test database).
        let second = try PipelineHarness("journal-second", prefix: first.prefix)
        try EndToEndTests.AggregatorWalkTests.register(second)
        let bus = try await second.recorder()
        let aggregator = try second.startAggregator()
        try await bus.wait(20, for: "online") { _ in bus.objects(on: second.topics.aggregatorStatus).last?["state"] as? String == "online" }
        // A resumed session would have ended at once (alice has not been heard for seconds).
        try await Task.sleep(for: .seconds(4))
        #expect(await aggregator.stop() == 0)
        await bus.stop()
        #expect(try second.rows("SELECT count(*) FROM presence.sessions") == ["0"], "a session came from the other database's journal")
        #expect(try second.rows("SELECT count(*) FROM presence.events") == ["0"], "an event came from the other database's journal")
        #expect(bus.objects(on: "\(second.prefix)/v1/events/").isEmpty, "an event was published from the other database's journal")
        // (Retained states of the first run are still on the broker: the two share a prefix.)
        #expect(!bus.messages.contains { $0.topic == second.topics.userState("alice") && !$0.retain && $0.text.contains("booth-a") },
                "alice was shown at a beacon")
        #expect(aggregator.stderr.contains("moved aside a journal"), "no line said the journal was moved aside")
        let parent = (first.stateDirectory as NSString)
        #expect(try FileManager.default.contentsOfDirectory(atPath: first.stateDirectory).contains { $0.hasPrefix("journal.moved-") },
                "no moved journal in \(parent)")
        // The first database is left as it was.
        #expect(try first.rows("SELECT beacon_key FROM presence.sessions WHERE exited_at IS NULL") == ["booth-a"])
    }

    @Test func aCopyOfTheSameDatabaseIsTheSameDatabaseAndTheJournalFillsItIn() async throws {
        let original = try PipelineHarness("journal-original")
        try EndToEndTests.AggregatorWalkTests.register(original)
        // The backup is taken before alice comes: it lacks her enter, which the journal holds.
        let backup = try PipelineHarness("journal-backup", database: TestDatabase.copy(of: original.databaseURL), prefix: original.prefix)
        try await Self.aliceEnters(original)
        let entered = try original.rows("SELECT enter_event FROM presence.sessions")

        let bus = try await backup.recorder()
        let aggregator = try backup.startAggregator()
        try await bus.wait(20, for: "online") { _ in bus.objects(on: backup.topics.aggregatorStatus).last?["state"] as? String == "online" }
        try await eventually(20, "the journal's enter stored in the restored copy") {
            (try? backup.rows("SELECT enter_event FROM presence.sessions")) == entered
        }
        #expect(await aggregator.stop() == 0)
        await bus.stop()
        #expect(!aggregator.stderr.contains("moved aside"), "the journal of the same database was moved aside")
        #expect(try backup.rows("SELECT count(*) FROM presence.events WHERE kind = 'enter'") == ["1"])
    }
}
