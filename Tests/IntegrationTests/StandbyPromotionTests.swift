import Foundation
import PresenceCore
import PresenceMQTT
import Testing

extension EndToEndTests {
    /// The aggregator and presencectl on a primary and its streaming standby, through one libpq
    /// multi-host URL: the primary dies in the middle of a walk, with the standby behind by what
    /// the primary acknowledged last; the standby is promoted, and the promoted database ends up
    /// with every published event once and the sessions they make, nothing doubled.
    @Suite struct StandbyPromotionTests {
        typealias Outage = AggregatorOutageTests

        static let tags = ["alice": AggregatorWalkTests.tag, "bob": Outage.bobTag,
                           "carol": "ibeacon:\(AggregatorWalkTests.uuid):7:3", "dave": "ibeacon:\(AggregatorWalkTests.uuid):7:4"]

        /// What each person's walk publishes, in order: `event beacon [reason]`.
        static let expectedVisits = [
            "alice": ["enter booth-a", "exit booth-a moved", "enter booth-b", "exit booth-b moved", "enter booth-c", "exit booth-c timeout"],
            "bob": ["enter booth-b", "exit booth-b moved", "enter booth-c", "exit booth-c timeout"],
            "carol": ["enter booth-c", "exit booth-c moved", "enter booth-b", "exit booth-b moved", "enter booth-a", "exit booth-a timeout"],
            "dave": ["enter booth-c", "exit booth-c timeout"],
        ]

        /// `presencectl presence --json` as `user beacon` lines, sorted; nil if it failed.
        static func presence(_ h: PipelineHarness) throws -> [String]? {
            let result = try h.ctl("presence", "--json")
            guard result.status == 0 else { return nil }
            return result.stdout.split(separator: "\n").compactMap { line -> String? in
                guard let row = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
                return "\(row["user"] ?? "") \(row["beacon"] ?? "")"
            }.sorted()
        }

        /// Venue expo with booths a, b and c, and the four walkers' tags.
        static func register(_ h: PipelineHarness) throws {
            try AggregatorWalkTests.register(h)
            for user in ["bob", "carol", "dave"] {
                try h.ctlOK("user", "add", user)
                try h.ctlOK("device", "add", tags[user] ?? "", "--user", user)
            }
        }

        /// Waits until the bus has every event of `wanted` (`event user beacon`).
        static func waitUntilPublished(_ wanted: Set<String>, _ bus: BusRecorder, _ h: PipelineHarness, within seconds: Double = 20) async throws {
            try await bus.wait(seconds, for: "\(wanted.sorted()) to be published") { _ in wanted.isSubset(of: Set(Outage.events(bus, h))) }
        }

        @Test func theAggregatorAndPresencectlFollowAPromotedStandbyAndTheEventsItLackedAreStoredAgainOnce() async throws {
            let primary = try PrivatePostgres.start()
            defer { primary.remove() }
            let standby = try primary.standby()
            defer { standby.remove() }
            let h = try PipelineHarness("standby", database: PrivatePostgres.multiHostURL([primary, standby]))
            try Self.register(h)
            try await standby.waitUntilReplayed(primary, within: 10)
            #expect(try TestDatabase.rows(standby.url, "SELECT count(*) FROM presence.devices") == ["4"])

            let bus = try await h.recorder()
            let aggregator = try h.startAggregator(["--absence-timeout", "4s", "--switch-dwell", "2s"])
            try await bus.wait(20, for: "online") { _ in Outage.status(bus, h)?["state"] as? String == "online" }
            let publisher = try await h.publisher()
            let people = Outage.Whereabouts()
            let done = Flag()
            let walking = Outage.walk(publisher, h, people, while: { !done.isSet })
            func put(_ user: String, at booth: String?) { people.put(Self.tags[user] ?? "", at: booth.map { "node-\($0)" }) }

            put("alice", at: "a")
            put("bob", at: "b")
            put("carol", at: "c")
            try await Self.waitUntilPublished(["enter alice booth-a", "enter bob booth-b", "enter carol booth-c"], bus, h)
            put("alice", at: "b")
            put("carol", at: "b")
            put("dave", at: "c")
            try await Self.waitUntilPublished(["enter alice booth-b", "enter carol booth-b", "enter dave booth-c"], bus, h)
            try await eventually(10, "the events so far stored on the primary") {
                (try? TestDatabase.rows(primary.url, "SELECT count(*) FROM presence.events")) == ["\(PublishedEvent.published(bus, h).count)"]
            }
            try await standby.waitUntilReplayed(primary, within: 10)

            // The standby falls behind: bob's move is stored on the primary, never on the standby.
            try await standby.detachFromPrimary(within: 10)
            put("bob", at: "c")
            try await Self.waitUntilPublished(["enter bob booth-c"], bus, h)
            let bobAtC = "SELECT count(*) FROM presence.sessions WHERE user_key = 'bob' AND beacon_key = 'booth-c'"
            try await eventually(10, "bob's move stored on the primary") { (try? TestDatabase.rows(primary.url, bobAtC)) == ["1"] }
            #expect(try TestDatabase.rows(standby.url, bobAtC) == ["0"], "the standby was not behind")

            // Alice moves on and dave leaves, and the primary dies a second later, before her move
            // can be decided (it takes 2 s); the standby is promoted once the aggregator has
            // published it, with no database taking writes.
            put("alice", at: "c")
            put("dave", at: nil)
            try await Task.sleep(for: .seconds(1))
            try primary.kill()
            try await Self.waitUntilPublished(["enter alice booth-c"], bus, h)
            try await bus.wait(10, for: "the status to say the database is unreachable") { _ in
                Outage.status(bus, h)?["reason"] as? String == "database unreachable"
            }
            #expect(try h.ctl("presence").status != 0, "presencectl found a database taking writes before the promotion")
            try standby.promote()

            try await Self.waitUntilPublished(["exit dave booth-c"], bus, h)
            // presencectl, through the same URL, finds the promoted database, once the aggregator
            // has stored there what it lacked.
            let present = try await lastReading(within: 20, until: ["alice booth-c", "bob booth-c", "carol booth-b"]) { try? Self.presence(h) }
            try #require(present == ["alice booth-c", "bob booth-c", "carol booth-b"])
            put("carol", at: "a")
            try await Self.waitUntilPublished(["enter carol booth-a"], bus, h)
            for user in ["alice", "bob", "carol"] { put(user, at: nil) }
            try await Self.waitUntilPublished(["exit alice booth-c", "exit bob booth-c", "exit carol booth-a"], bus, h)
            done.set()
            _ = try? await walking.value

            // What was published: each walk as it happened, no event twice, no second enter for
            // someone who stayed.
            let published = PublishedEvent.published(bus, h)
            #expect(PublishedEvent.visits(published) == Self.expectedVisits)
            #expect(Set(published.map(\.id)).count == published.count, "an event published twice")

            // What the promoted database holds, once the aggregator has stored the last exits: every
            // published event once, as published, and nothing else; the sessions those events
            // make, each once, all closed.
            let stored = try await lastReading(within: 20, until: Set(published)) { Set((try? PublishedEvent.stored(in: standby.url)) ?? []) }
            #expect(stored == Set(published), "stored \(stored.map(\.visit).sorted()) against published \(published.map(\.visit).sorted())")
            #expect(try PublishedEvent.stored(in: standby.url).count == published.count, "an event stored twice")
            let sessions = try StoredSession.stored(in: standby.url)
            #expect(Set(sessions).count == sessions.count && Set(sessions) == StoredSession.made(by: published),
                    "sessions \(sessions) against those the published events make")
            #expect(try TestDatabase.rows(standby.url, "SELECT count(*) FROM presence.sessions WHERE exited_at IS NULL") == ["0"], "a session left open")
            #expect(try TestDatabase.rows(standby.url, "SELECT pg_is_in_recovery()") == ["f"])

            // presencectl, through the same URL, reads the promoted database.
            let listed = try h.ctl("sessions", "--json")
            #expect(listed.status == 0, "\(listed.stderr)")
            let rows = listed.stdout.split(separator: "\n").compactMap { line -> String? in
                guard let row = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
                return "\(row["user"] ?? "") \(row["beacon"] ?? "") \(row["reason"] ?? "")"
            }
            let visited = Self.expectedVisits.flatMap { user, visits in
                visits.filter { $0.hasPrefix("exit ") }.map { "\(user) \($0.dropFirst("exit ".count))" }
            }
            #expect(rows.sorted() == visited.sorted())

            #expect(aggregator.poll() == nil, "the aggregator died: \(aggregator.stderr.suffix(2000))")
            #expect(await aggregator.stop() == 0)
            await bus.stop()
            await publisher.stop()
        }
    }
}
