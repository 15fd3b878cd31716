import Foundation
import PresenceCore
import PresenceMQTT
import Synchronization
import Testing

extension EndToEndTests {
    /// One server away at a time: the other half of the work goes on, and nothing is lost or
    /// doubled when it returns, or when the aggregator is killed meanwhile.
    @Suite struct AggregatorOutageTests {
        static let bobTag = "ibeacon:\(AggregatorWalkTests.uuid):7:2"

        /// Where each person is: the node that hears them strongly (nil: gone).
        final class Whereabouts: Sendable {
            private let places = Mutex<[String: String?]>([:])
            private let last = Mutex<[String: Int64]>([:])

            func put(_ tag: String, at node: String?) { places.withLock { $0[tag] = .some(node) } }
            func place(of tag: String) -> String? { places.withLock { $0[tag] ?? nil } }
            var tags: [String] { places.withLock { Array($0.keys) } }
            func heard(_ tag: String, at time: Int64) { last.withLock { $0[tag] = time } }
            func lastHeard(_ tag: String) -> Int64? { last.withLock { $0[tag] } }
        }

        /// Publishes, every 500 ms, what nodes a, b and c hear of each person placed somewhere:
        /// -55 dBm at their node, -80 elsewhere; with several `shards` (as the venue says at each
        /// batch), each batch in parts, one per shard, as nodes of such a venue do.
        static func walk(_ publisher: MQTTClient, _ h: PipelineHarness, _ people: Whereabouts, shards count: @escaping @Sendable () -> Shards = { .one },
                         while keepGoing: @escaping @Sendable () -> Bool) -> Task<Void, any Error> {
            Task {
                var seq: Int64 = 0
                while keepGoing() && !Task.isCancelled {
                    seq += 1
                    let now = nowMilliseconds()
                    let shards = count()
                    for node in ["node-a", "node-b", "node-c"] {
                        var sightings: [Sighting] = []
                        for tag in people.tags.sorted() {
                            guard let place = people.place(of: tag) else { continue }
                            sightings.append(Sighting(ts: now, id: tag, rssi: place == node ? -55 : -80, tx: -59))
                            people.heard(tag, at: now)
                        }
                        let batch = SightingBatch(node: node, seq: seq, sent: now, sightings: sightings)
                        guard shards.count > 1 else {
                            try await publisher.publish(batch, topics: h.topics)
                            continue
                        }
                        for part in shards.parts(of: batch) {
                            try await publisher.publish(MQTTMessage(topic: h.topics.sightings(node: node, shard: part.shard), payload: part.batch.encoded(), qos: 1))
                        }
                    }
                    try await Task.sleep(for: .milliseconds(500))
                }
            }
        }

        static func events(_ bus: BusRecorder, _ h: PipelineHarness) -> [String] {
            bus.objects(on: "\(h.prefix)/v1/events/").map { "\($0["event"] ?? "") \($0["user"] ?? "") \($0["beacon"] ?? "")" }
        }

        static func status(_ bus: BusRecorder, _ h: PipelineHarness) -> [String: Any]? {
            bus.objects(on: h.topics.aggregatorStatus).last
        }

        /// An aggregator on its own PostgreSQL, online, with alice entered at booth-a (and stored)
        /// and still heard there.
        struct Running {
            let h: PipelineHarness
            let bus: BusRecorder
            let aggregator: ChildProcess
            let publisher: MQTTClient
            let people: Whereabouts
            let done: Flag
            let walking: Task<Void, any Error>
        }

        /// An aggregator for `h`, online, with alice placed at node-a.
        static func online(_ h: PipelineHarness, _ arguments: [String] = []) async throws -> Running {
            _ = try AggregatorRobustnessTests.registerWithBob(h)
            let bus = try await h.recorder()
            let aggregator = try h.startAggregator(arguments)
            try await bus.wait(20, for: "online") { _ in Self.status(bus, h)?["state"] as? String == "online" }
            let publisher = try await h.publisher()
            let people = Whereabouts()
            let done = Flag()
            people.put(AggregatorWalkTests.tag, at: "node-a")
            let walking = Self.walk(publisher, h, people, while: { !done.isSet })
            return Running(h: h, bus: bus, aggregator: aggregator, publisher: publisher, people: people, done: done, walking: walking)
        }

        static func aliceAtBoothA(_ postgres: PrivatePostgres, _ label: String) async throws -> Running {
            let run = try await online(try PipelineHarness(label, database: postgres.url))
            try await run.bus.wait(15, for: "alice at booth-a") { _ in Self.events(run.bus, run.h).contains("enter alice booth-a") }
            try await eventually(10, "her session stored") { (try? run.h.rows("SELECT count(*) FROM presence.sessions")) == ["1"] }
            return run
        }

        @Test func withPostgreSQLAwayEventsArePublishedTheStatusSaysDegradedAndSessionsAreStoredWhenItReturns() async throws {
            let postgres = try PrivatePostgres.start()
            defer { postgres.remove() }
            let run = try await Self.aliceAtBoothA(postgres, "pgdown")
            let (h, bus, aggregator, publisher, people, done, walking) = (run.h, run.bus, run.aggregator, run.publisher, run.people, run.done, run.walking)

            try postgres.stop()
            let outage = ContinuousClock.now
            people.put(AggregatorWalkTests.tag, at: "node-b")
            people.put(Self.bobTag, at: "node-c")
            try await bus.wait(20, for: "the move and bob's enter, published while the database is away") { _ in
                let events = Self.events(bus, h)
                return events.contains("exit alice booth-a") && events.contains("enter alice booth-b") && events.contains("enter bob booth-c")
            }
            try await bus.wait(10, for: "the status to say degraded") { _ in
                let status = Self.status(bus, h)
                return status?["state"] as? String == "degraded" && status?["reason"] as? String == "database unreachable"
            }
            #expect(ContinuousClock.now - outage < .seconds(25), "the events came only after the outage")
            try await Task.sleep(until: outage + .seconds(25))
            try postgres.restart()

            try await eventually(30, "every session stored once the database is back") {
                (try? h.rows("SELECT user_key || ' ' || beacon_key || ' ' || COALESCE(exit_reason, 'open') FROM presence.sessions ORDER BY user_key, entered_at"))
                    == ["alice booth-a moved", "alice booth-b open", "bob booth-c open"]
            }
            try await bus.wait(15, for: "online again") { _ in Self.status(bus, h)?["state"] as? String == "online" }
            #expect(try h.rows("SELECT count(*), count(DISTINCT id) FROM presence.events") == ["4|4"])
            done.set()
            _ = try? await walking.value
            #expect(aggregator.poll() == nil, "the aggregator died: \(aggregator.stderr.suffix(2000))")
            #expect(await aggregator.stop() == 0)
            await bus.stop()
            await publisher.stop()
        }

        @Test func withTheBrokerAwaySessionsAreStoredAndTheExitsDecidedMeanwhileArePublishedInOrderWhenItReturns() async throws {
            let broker = try PrivateBroker.start()
            defer { broker.remove() }
            // Decisions wait 5 s for what the nodes might say while the broker is away, then go on.
            let run = try await Self.online(try PipelineHarness("brokerdown", broker: broker.url), ["--inbound-down-hold", "5s"])
            let (h, bus, aggregator, publisher, people, done, walking) = (run.h, run.bus, run.aggregator, run.publisher, run.people, run.done, run.walking)
            people.put(Self.bobTag, at: "node-b")
            try await bus.wait(15, for: "both to enter") { _ in
                let events = Self.events(bus, h)
                return events.contains("enter alice booth-a") && events.contains("enter bob booth-b")
            }
            // Alice leaves, bob two seconds later; then the broker goes away for 20 s, during
            // which both time out (past the hold).
            people.put(AggregatorWalkTests.tag, at: nil)
            try await Task.sleep(for: .seconds(2))
            people.put(Self.bobTag, at: nil)
            try await Task.sleep(for: .seconds(1))
            done.set()
            _ = try? await walking.value
            await publisher.stop()
            await bus.stop()
            let aliceLast = try #require(people.lastHeard(AggregatorWalkTests.tag))
            let bobLast = try #require(people.lastHeard(Self.bobTag))
            try broker.stop()
            let outage = ContinuousClock.now

            try await eventually(25, "both exits stored while the broker is away") {
                (try? h.rows("SELECT user_key || ' ' || exit_reason || ' ' || (EXTRACT(EPOCH FROM exited_at) * 1000)::bigint FROM presence.sessions ORDER BY user_key"))
                    == ["alice timeout \(aliceLast)", "bob timeout \(bobLast)"]
            }
            #expect(ContinuousClock.now - outage < .seconds(20), "the exits were stored only after the outage")
            try await Task.sleep(until: outage + .seconds(20))
            try broker.restart()
            let late = try await h.recorder()
            try await late.wait(30, for: "the exits, published once the broker is back") { _ in Self.events(late, h).count >= 2 }
            let exits = late.objects(on: "\(h.prefix)/v1/events/")
            #expect(exits.map { "\($0["event"] ?? "") \($0["user"] ?? "")" } == ["exit alice", "exit bob"], "published out of order")
            #expect(exits.map { ($0["at"] as? Int).map(Int64.init) } == [aliceLast, bobLast])
            #expect(aggregator.poll() == nil, "the aggregator died: \(aggregator.stderr.suffix(2000))")
            #expect(await aggregator.stop() == 0)
            await late.stop()
        }

        @Test func killedDuringADatabaseOutageTheAggregatorLosesNothingAndDoublesNothing() async throws {
            let postgres = try PrivatePostgres.start()
            defer { postgres.remove() }
            let run = try await Self.aliceAtBoothA(postgres, "killed")
            let (h, bus, publisher, people, done, walking) = (run.h, run.bus, run.publisher, run.people, run.done, run.walking)
            var aggregator = run.aggregator

            try postgres.stop()
            people.put(AggregatorWalkTests.tag, at: "node-b")
            people.put(Self.bobTag, at: "node-c")
            try await bus.wait(20, for: "the move and bob's enter, decided but not stored") { _ in
                let events = Self.events(bus, h)
                return events.contains("enter alice booth-b") && events.contains("enter bob booth-c")
            }
            try await Task.sleep(for: .seconds(2))
            aggregator.send(SIGKILL)
            _ = await aggregator.wait(timeout: .seconds(5))
            try postgres.restart()
            aggregator = try h.startAggregator()
            try await eventually(30, "every session stored after the restart") {
                (try? h.rows("SELECT user_key || ' ' || beacon_key || ' ' || COALESCE(exit_reason, 'open') FROM presence.sessions ORDER BY user_key, entered_at"))
                    == ["alice booth-a moved", "alice booth-b open", "bob booth-c open"]
            }
            try await Task.sleep(for: .seconds(5))
            done.set()
            _ = try? await walking.value
            #expect(try h.rows("SELECT count(*), count(DISTINCT id) FROM presence.events") == ["4|4"])
            #expect(try h.rows("SELECT user_key || ' ' || beacon_key || ' ' || COALESCE(exit_reason, 'open') FROM presence.sessions ORDER BY user_key, entered_at")
                    == ["alice booth-a moved", "alice booth-b open", "bob booth-c open"], "a session changed after the restart")
            let published = bus.objects(on: "\(h.prefix)/v1/events/")
            let events = Self.events(bus, h)
            #expect(events.sorted() == ["enter alice booth-a", "enter alice booth-b", "enter bob booth-c", "exit alice booth-a"],
                    "an event lost or published twice: \(events)")
            #expect(events.filter { $0.contains("alice") } == ["enter alice booth-a", "exit alice booth-a", "enter alice booth-b"])
            #expect(Set(published.compactMap { $0["id"] as? String }).count == published.count)
            #expect(await aggregator.stop() == 0)
            await bus.stop()
            await publisher.stop()
        }
    }
}
