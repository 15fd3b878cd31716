import Foundation
import Testing
@testable import PresenceCore

@Suite struct AggregatorCoreTests {
    static let start: Int64 = 1_763_774_700_000
    static let topics = (try? Topics(prefix: "site/presence")) ?? { preconditionFailure() }()

    static func core(_ configure: (inout AggregatorCore.Configuration) -> Void = { _ in }, registry: Registry = PresencePipelineTests.registry,
                     sessions: [Presence] = []) -> AggregatorCore {
        var configuration = AggregatorCore.Configuration()
        configuration.catchUp = false
        configuration.topics = topics
        configure(&configuration)
        return AggregatorCore(configuration: configuration, registry: registry, sessions: sessions, now: start)
    }

    /// `core()`, resumed.
    static func resumed(_ configure: (inout AggregatorCore.Configuration) -> Void = { _ in }, registry: Registry = PresencePipelineTests.registry)
        -> AggregatorCore {
        var core = core(configure, registry: registry)
        _ = core.resume(at: start)
        return core
    }

    static func receive(_ core: inout AggregatorCore, _ topic: String, _ payload: [UInt8], at time: Int64) -> [AggregatorCore.Action] {
        payload.withUnsafeBytes { core.receive(topic: topic, payload: $0, at: time) }
    }

    static func events(_ actions: [AggregatorCore.Action]) -> [PresenceEvent] {
        actions.flatMap { action -> [PresenceEvent] in
            guard case .record(.decided(let decided)) = action else { return [] }
            return decided.events
        }
    }

    @Test func dispatchesByTopicAndDecidesExactlyAsThePipeline() {
        var core = Self.resumed()
        var pipeline = PresencePipeline(configuration: .init(), registry: PresencePipelineTests.registry, start: Self.start)
        var viaCore: [PresenceEvent] = []
        var viaPipeline: [PresenceEvent] = []
        for (node, payload, received) in PresencePipelineTests.walk(seed: 9, start: Self.start) {
            viaCore += Self.events(Self.receive(&core, Self.topics.sightings(node: node), payload, at: received))
            viaPipeline += pipeline.receive(payload, node: Substring(node), at: received).events
            if received % 7 == 0 {
                viaCore += Self.events(Self.receive(&core, Self.topics.nodeStats(node: node), Array(#"{"v":1}"#.utf8), at: received))
                viaPipeline += pipeline.receiveStats(node: Substring(node), at: received).events
            }
        }
        viaCore += Self.events(core.tick(at: Self.start + 300_000))
        viaPipeline += pipeline.advanceClock(to: Self.start + 300_000)
        #expect(viaCore.map(\.kind) == [.enter, .exit, .enter, .exit])
        #expect(viaCore == viaPipeline)
        #expect(Self.receive(&core, "site/presence/v1/other/node-a", Array("{}".utf8), at: Self.start + 130_000).isEmpty)
    }

    @Test func aDecidedRecordPublishesTheExitBeforeTheEnterThenTheHelloThenTheStates() throws {
        var registry = PresencePipelineTests.registry
        registry.beacons["b"]?.hello = "Hi {name}"
        var core = Self.resumed(registry: registry)
        var decided: [OutboundRecord.Decided] = []
        for (node, payload, received) in PresencePipelineTests.walk(seed: 9, start: Self.start) {
            decided += Published.records(Self.receive(&core, Self.topics.sightings(node: node), payload, at: received))
        }
        let move = try #require(decided.first { $0.events.count == 2 })
        #expect(move.decidedAt >= move.events[0].at)
        #expect(move.messages.map(\.topic) == ["site/presence/v1/events/a/alice", "site/presence/v1/events/b/alice", "site/presence/v1/notify/alice",
                                               "site/presence/v1/state/users/alice", "site/presence/v1/state/beacons/a", "site/presence/v1/state/beacons/b"])
        #expect(move.messages.map(\.retain) == [false, false, false, true, true, true])
        #expect(move.notifications.map(\.message) == ["Hi alice"])
        // Each event is encoded once, here: its payload is the event's JSON and reads back as the event.
        for message in move.messages.prefix(2) {
            #expect(message.payload == message.event?.encoded())
            #expect((try? PresenceEvent(payload: message.payload))?.id == message.event?.id)
        }
    }

    @Test func catchingUpWaitsForTheSubscriptionsButNotForEver() {
        let stopped = Self.start
        let restart = stopped + 60_000
        var core = AggregatorCore(configuration: .init(), registry: PresencePipelineTests.registry, sessions: [], savedClock: stopped, now: restart)
        _ = core.resume(at: restart)
        #expect(core.catchingUp)
        // A slow connect: five quiet seconds before the subscriptions are in place are no sign
        // that the backlog is drained.
        for i in 1 ... 50 { _ = core.tick(at: restart + Int64(i) * 100) }
        let beforeSubscribing = core.catchingUp
        #expect(beforeSubscribing)
        core.subscribed(at: restart + 5_000)
        _ = core.tick(at: restart + 5_400)
        let soonAfter = core.catchingUp
        #expect(soonAfter, "less than the quiet window since the subscriptions")
        _ = core.tick(at: restart + 5_600)
        let afterQuiet = core.catchingUp
        #expect(!afterQuiet && core.state == .live)
        // A broker that never answers: catching up ends at the limit, and decisions go on.
        var unanswered = AggregatorCore(configuration: .init(), registry: PresencePipelineTests.registry, sessions: [], savedClock: stopped, now: restart)
        _ = unanswered.resume(at: restart)
        _ = unanswered.tick(at: restart + 29_000)
        let beforeLimit = unanswered.catchingUp
        #expect(beforeLimit)
        _ = unanswered.tick(at: restart + 30_000)
        let atLimit = unanswered.catchingUp
        #expect(!atLimit)
    }

    @Test func aRestartDrainsWhatTheBrokerKeptInItsOwnTimeBeforeTheClockMovesOn() {
        let stopped = Self.start
        let restart = stopped + 60_000
        var core = AggregatorCore(configuration: .init(), registry: PresencePipelineTests.registry, sessions: [
            Presence(user: "alice", device: PresencePipelineTests.tag, beacon: "a", venue: "expo", entered: stopped - 30_000, lastSeen: stopped - 500),
        ], savedClock: stopped, now: restart)
        #expect(Self.events(core.resume(at: restart)).isEmpty)
        #expect(core.catchingUp)
        core.subscribed(at: restart)
        // Ticks while the backlog flows decide nothing: alice's absence is not judged on the wall clock.
        var events: [PresenceEvent] = []
        var last: Int64 = 0
        for i in 0 ..< 16 {
            last = stopped + Int64(i) * 500
            events += Self.events(Self.receive(&core, Self.topics.sightings(node: "node-a"),
                                               PresencePipelineTests.batch("node-a", seq: Int64(i), at: last, rssi: -55, sent: last + 50),
                                               at: restart + Int64(i) * 20))
            events += Self.events(core.tick(at: restart + Int64(i) * 20 + 10))
        }
        #expect(events.isEmpty && core.catchingUp)
        let caughtUp = core.tick(at: restart + 900)
        #expect(!core.catchingUp)
        #expect(caughtUp.contains { if case .log(let line) = $0 { line.message == "caught up with what the broker kept" } else { false } })
        events += Self.events(caughtUp) + Self.events(core.tick(at: restart + 2_000))
        #expect(events.map(\.kind) == [.exit])
        #expect(events.first?.at == last && events.first?.reason == .timeout)
    }

    @Test func resumedSessionsPublishEveryStateAndThoseWhoseUserIsGoneEnd() {
        var core = Self.core(sessions: [
            Presence(user: "alice", device: PresencePipelineTests.tag, beacon: "a", venue: "expo", entered: Self.start - 9_000, lastSeen: Self.start - 500),
            Presence(user: "ghost", device: "mac:00:11:22:33:44:55", beacon: "b", venue: "expo", entered: Self.start - 9_000, lastSeen: Self.start - 500),
        ])
        let actions = core.resume(at: Self.start)
        guard case .record(.decided(let restored)) = actions.first, restored.events.isEmpty else {
            Issue.record("the restored states come first: \(actions)")
            return
        }
        #expect(restored.messages.map(\.topic) == ["site/presence/v1/config", "site/presence/v1/state/users/alice", "site/presence/v1/state/users/ghost",
                                                   "site/presence/v1/state/beacons/a", "site/presence/v1/state/beacons/b"])
        #expect(Self.events(actions).map { "\($0.user) \($0.reason?.rawValue ?? "")" } == ["ghost removed"])
        #expect(core.state == .live)
    }

    @Test func aNewRegistryEndsSessionsAndDeletesTheRetainedStatesOfWhatWentAway() {
        var core = Self.resumed()
        var entered: [PresenceEvent] = []
        for i in 0 ..< 8 {
            let t = Self.start + Int64(i) * 500
            entered += Self.events(Self.receive(&core, Self.topics.sightings(node: "node-a"),
                                                PresencePipelineTests.batch("node-a", seq: Int64(i), at: t, rssi: -55), at: t))
        }
        entered += Self.events(core.tick(at: Self.start + 5_000))
        #expect(entered.map(\.kind) == [.enter])
        var smaller = PresencePipelineTests.registry
        smaller.beacons["a"] = nil
        smaller.nodes["node-a"] = nil
        smaller.users["alice"] = nil
        smaller.beacons["c"] = Registry.Beacon(key: "c", venue: "expo")
        let actions = core.replaceRegistry(smaller, at: Self.start + 6_000)
        #expect(Self.events(actions).map(\.reason) == [.removed])
        let states = Published.records(actions).filter(\.events.isEmpty)
        #expect(states.count == 1)
        // The user's state is deleted, the new beacon's published, the old beacon's deleted.
        #expect(states.first?.messages.map { "\($0.topic) \($0.payload.isEmpty ? "deleted" : "published")" } == [
            "site/presence/v1/state/users/alice deleted", "site/presence/v1/state/beacons/c published", "site/presence/v1/state/beacons/a deleted",
        ])
        #expect(core.replaceRegistry(smaller, at: Self.start + 7_000).isEmpty)
    }

    @Test func progressSavesALastSightingOnceItMovedFarEnoughAndExactlyAtTheEnd() {
        var core = Self.resumed()
        var saved: [[OutboundRecord.LastSeen]] = []
        var last: Int64 = 0
        for i in 0 ..< 30 {
            last = Self.start + Int64(i) * 500
            _ = Self.receive(&core, Self.topics.sightings(node: "node-a"), PresencePipelineTests.batch("node-a", seq: Int64(i), at: last, rssi: -55), at: last)
            for case .record(.progress(let progress)) in core.tick(at: last + 100) { saved.append(progress.lastSeen) }
        }
        let times = saved.flatMap { $0.map(\.time) }
        #expect(times.count >= 2 && times.count <= 4, "\(times)")
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= 5_000 })
        let final = core.finish(at: last + 2_000).compactMap { action -> OutboundRecord.Progress? in
            if case .record(.progress(let progress)) = action { progress } else { nil }
        }
        #expect((times + (final.first?.lastSeen.map(\.time) ?? [])).max() == last)
        #expect(final.first.map { $0.clock > Self.start } ?? false)
    }

    @Test func linesAboutStrangersAreHeldBackToOnePerIntervalAndSayHowManyWere() {
        var core = Self.resumed()
        var warnings: [AggregatorCore.LogLine] = []
        for i in 0 ..< 100 {
            let time = Self.start + Int64(i) * 300
            let node = "ghost-\(i)"
            for case .log(let line) in Self.receive(&core, Self.topics.sightings(node: node), PresencePipelineTests.batch(node, seq: 1, at: time, rssi: -50), at: time)
            where line.level == .warning {
                warnings.append(line)
            }
        }
        #expect(warnings.count == 3)
        #expect(warnings.dropFirst().allSatisfy { Int($0.metadata["suppressed"] ?? "") ?? 0 > 20 })
        #expect(core.pipeline.strangers.counts[.unregisteredNode] == 100)
    }

    @Test func positionsArePublishedForUsersHeardSinceTheLastOnes() {
        var registry = PresencePipelineTests.registry
        registry.beacons["a"]?.x = 0
        registry.beacons["a"]?.y = 0
        registry.beacons["b"]?.x = 7
        registry.beacons["b"]?.y = 0
        registry.nodes["node-a"]?.x = 0
        registry.nodes["node-a"]?.y = 0
        registry.nodes["node-b"]?.x = 7
        registry.nodes["node-b"]?.y = 0
        var core = Self.resumed(registry: registry)
        var entered: [[String: Any]] = []
        var placed: [[String: Any]] = []
        var placedStandingStill = 0
        for i in 0 ..< 20 {
            let t = Self.start + Int64(i) * 500
            if i == 12 { placedStandingStill = placed.count }
            // From 6 s on she steps towards b, still nearer a.
            let atB = i < 12 ? -70 : -60
            let actions = Self.receive(&core, Self.topics.sightings(node: "node-a"), PresencePipelineTests.batch("node-a", seq: Int64(i), at: t, rssi: -55), at: t)
                + Self.receive(&core, Self.topics.sightings(node: "node-b"), PresencePipelineTests.batch("node-b", seq: Int64(i), at: t, rssi: atB), at: t + 1)
                + core.tick(at: t + 200)
            for record in Published.records(actions) {
                let users = Published.objects(record.messages, on: "site/presence/v1/state/users/")
                if record.events.isEmpty { placed += users } else { entered += users }
            }
        }
        // The enter's state says where alice stands, nearer a than b; standing still, she is not
        // placed again; stepping towards b, she is.
        func x(_ state: [String: Any]?) -> Double? { ((state?["position"] as? [String: Any])?["x"] as? NSNumber)?.doubleValue }
        #expect(entered.count == 1 && entered.first?["beacon"] as? String == "a")
        #expect((x(entered.first) ?? 7) < 3.5)
        #expect(placedStandingStill == 0)
        #expect(placed.count >= 1 && placed.allSatisfy { (x($0) ?? 0) > (x(entered.first) ?? 7) })
        #expect(Self.events(core.tick(at: Self.start + 10_100)).isEmpty)
        // Nobody heard since: nothing more to place.
        let later = Published.objects(Published.messages(core.tick(at: Self.start + 11_000) + core.tick(at: Self.start + 12_500)),
                                      on: "site/presence/v1/state/users/")
        #expect(later.isEmpty)
    }

    @Test func theRateLimiterLetsOneLinePerKeyAndIntervalThrough() {
        var limiter = RateLimiter(interval: 1_000)
        #expect(limiter.admit("a", at: 0) == 0)
        #expect(limiter.admit("a", at: 500) == nil)
        #expect(limiter.admit("b", at: 600) == 0)
        #expect(limiter.admit("a", at: 900) == nil)
        #expect(limiter.admit("a", at: 1_000) == 2)
        #expect(limiter.admit("a", at: .min) == nil)
    }
}

@Suite struct AggregatorCoreCrowdTests {
    /// 200 people arrive at booth a over four seconds, each heard by node-a.
    static let people = 200
    static let registry: Registry = {
        var registry = PresencePipelineTests.registry
        for person in 0 ..< people {
            registry.users["p\(person)"] = .init(key: "p\(person)")
            let identity = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:2:\(person)"
            registry.devices[identity] = .init(identity: identity, user: "p\(person)")
        }
        return registry
    }()

    @Test func aCrowdRepublishesABeaconsStateOncePerIntervalAndItsLastStateListsEveryone() {
        let start = AggregatorCoreTests.start
        var core = AggregatorCoreTests.resumed(registry: Self.registry)
        var beaconStates: [(at: Int64, users: [String])] = []
        var enters = 0
        func note(_ actions: [AggregatorCore.Action], at time: Int64) {
            for record in Published.records(actions) {
                enters += record.events.filter { $0.kind == .enter }.count
                beaconStates += Published.objects(record.messages, on: "site/presence/v1/state/beacons/a").map { (time, $0["users"] as? [String] ?? []) }
            }
        }
        var seq: Int64 = 0
        for t in stride(from: start, to: start + 8_000, by: 100) {
            seq += 1
            let arrived = min(Self.people, Int((t - start) / 20) + 1)
            let sightings = (0 ..< arrived).map {
                Sighting(ts: t, id: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:2:\($0)", rssi: -60, tx: -59)
            }
            let payload = SightingBatch(node: "node-a", seq: seq, sent: t, sightings: sightings).encoded()
            note(AggregatorCoreTests.receive(&core, AggregatorCoreTests.topics.sightings(node: "node-a"), payload, at: t + 30), at: t + 30)
            note(core.tick(at: t + 50), at: t + 50)
        }
        note(core.finish(at: start + 8_100), at: start + 8_100)
        #expect(enters == Self.people)
        let atA = beaconStates
        #expect(atA.count >= 4 && atA.count <= 10, "about one state a second while people keep arriving, not one per tick: \(atA.count)")
        for (earlier, later) in zip(atA, atA.dropFirst()) {
            #expect(later.at - earlier.at >= 1_000)
        }
        #expect(atA.last?.users.count == Self.people)
        #expect(atA.first?.users.isEmpty == false, "the first change goes out at once")
    }
}
