import Testing
@testable import PresenceCore

/// Beacons' own margins, dwells and timeouts, and adjacency (`presencectl beacon add
/// --switch-margin --switch-dwell --absence-timeout --next-to`), as `PlacePolicies` documents them.
@Suite struct PlacePolicyTests {
    /// One user whose readings are taken as heard (no smoothing), decided every 100 ms as the
    /// pipeline does; each event is kept with the moment it came out.
    private struct Walk {
        var engine: PresenceEngine
        var emitted: [(event: PresenceEvent, at: Int64)] = []

        init(_ places: [String: PlacePolicies.Policy] = [:], decision: EngineConfiguration.Decision = .dwell) {
            var configuration = EngineConfiguration()
            configuration.decision = decision
            configuration.smoothing.method = .exponential
            configuration.smoothing.timeConstant = 0
            engine = PresenceEngine(configuration: configuration, now: 0)
            engine.setPlaces(PlacePolicies(places))
        }

        /// Every 100 ms from `start` up to `end`: a reading of each beacon in `rssi`.
        mutating func hear(from start: Int64, to end: Int64, _ rssi: [String: Double]) {
            for time in stride(from: start, to: end, by: 100) {
                for (beacon, value) in rssi.sorted(by: { $0.key < $1.key }) {
                    engine.ingest(Observation(time: time, user: "alice", device: "tag-1", beacon: beacon, venue: "expo",
                                              node: "node-\(beacon)", rssi: value, tx: -59))
                }
                for event in engine.advance(to: time) { emitted.append((event, time)) }
            }
        }

        mutating func wait(until end: Int64) {
            for time in stride(from: engine.now + 100, through: end, by: 100) {
                for event in engine.advance(to: time) { emitted.append((event, time)) }
            }
        }

        /// The enter at `beacon`: its `at` and the moment it came out.
        func enter(at beacon: String) -> (at: Int64, known: Int64)? {
            emitted.first { $0.event.kind == .enter && $0.event.beacon == beacon }.map { ($0.event.at, $0.at) }
        }

        func exit(from beacon: String) -> (event: PresenceEvent, known: Int64)? {
            emitted.first { $0.event.kind == .exit && $0.event.beacon == beacon }.map { ($0.event, $0.at) }
        }
    }

    /// At `from` for 10 s, then `to` nearer by `lead` dB for 20 s.
    private static func move(from: String, to: String, lead: Double, places: [String: PlacePolicies.Policy] = [:],
                             decision: EngineConfiguration.Decision = .dwell) -> Walk {
        var walk = Walk(places, decision: decision)
        walk.hear(from: 0, to: 10_000, [from: -60, to: -80])
        walk.hear(from: 10_000, to: 30_000, [from: -70, to: -70 + lead])
        return walk
    }

    @Test func aMoveNeedsTheLargerMarginAndTheLongerDwellOfItsTwoEnds() {
        let policies = PlacePolicies(["desk": .init(switchMargin: 10), "door": .init(switchDwell: 6_000), "hall": .init(switchMargin: 2)])
        let configuration = EngineConfiguration()
        #expect(policies.moveRule(from: "desk", to: "booth", configuration: configuration)
            == .init(margin: 10, dwell: 3_000, isJump: false))
        #expect(policies.moveRule(from: "booth", to: "desk", configuration: configuration).margin == 10)
        #expect(policies.moveRule(from: "hall", to: "door", configuration: configuration)
            == .init(margin: 4, dwell: 6_000, isJump: false), "a lower margin at one end does not lower the other's")
        #expect(policies.moveRule(from: "a", to: "b", configuration: configuration) == .init(margin: 4, dwell: 3_000, isJump: false))
        #expect(policies.absenceTimeout(at: "door", configuration: configuration) == 15_000)
    }

    @Test func neighboursAreDeclaredOnEitherSideAndUndeclaredBeaconsAreNextToAll() {
        let policies = PlacePolicies(["a": .init(neighbours: ["b"]), "c": .init(neighbours: ["b"])])
        #expect(policies.areNeighbours("a", "b") && policies.areNeighbours("b", "a"))
        #expect(policies.areNeighbours("b", "c"))
        #expect(!policies.areNeighbours("a", "c"), "a declares its neighbours and c is not one")
        #expect(!policies.areNeighbours("a", "x"))
        #expect(policies.areNeighbours("x", "y"), "neither declares any")
        var configuration = EngineConfiguration()
        configuration.jumpMargin = 5
        configuration.jumpDwell = 2_000
        #expect(policies.moveRule(from: "a", to: "c", configuration: configuration) == .init(margin: 9, dwell: 5_000, isJump: true))
    }

    @Test func registryPoliciesLeaveOutUnknownNeighboursAndBeaconsThatSayNothing() {
        let registry = Registry(beacons: [
            Registry.Beacon(key: "a", nextTo: ["b", "gone", "a"]), Registry.Beacon(key: "b"),
            Registry.Beacon(key: "door", absenceTimeout: 5_000),
        ])
        let policies = PlacePolicies(registry: registry)
        #expect(policies.policies == ["a": .init(neighbours: ["b"]), "b": .init(neighbours: ["a"]), "door": .init(absenceTimeout: 5_000)])
        #expect(PlacePolicies(registry: Registry(beacons: [Registry.Beacon(key: "a")])).isEmpty)
    }

    @Test func aStickyDeskKeepsItsUserAgainstALeadBelowItsMargin() throws {
        let plain = Self.move(from: "desk", to: "aisle", lead: 7)
        #expect(plain.enter(at: "aisle") != nil, "7 dB beats the default 4 dB margin")
        let sticky = Self.move(from: "desk", to: "aisle", lead: 7, places: ["desk": .init(switchMargin: 10)])
        #expect(sticky.enter(at: "aisle") == nil)
        #expect(sticky.emitted.map(\.event.kind) == [.enter])
        let clear = try #require(Self.move(from: "desk", to: "aisle", lead: 12, places: ["desk": .init(switchMargin: 10)]).enter(at: "aisle"))
        #expect(clear.at == 10_000)
    }

    @Test func aBeaconsDwellDelaysTheMovesToIt() throws {
        let plain = try #require(Self.move(from: "booth", to: "door", lead: 12).enter(at: "door"))
        let slow = try #require(Self.move(from: "booth", to: "door", lead: 12, places: ["door": .init(switchDwell: 6_000)]).enter(at: "door"))
        #expect(plain.known - 10_000 >= 3_000 && plain.known - 10_000 < 4_000)
        #expect(slow.known - 10_000 >= 6_000 && slow.known - 10_000 < 7_000)
        #expect(slow.at == plain.at, "both dated to when the door became the nearer")
    }

    @Test func aBeaconsAbsenceTimeoutEndsItsSessions() throws {
        var door = Walk(["door": .init(absenceTimeout: 4_000)])
        door.hear(from: 0, to: 5_000, ["door": -60])
        door.wait(until: 30_000)
        let exit = try #require(door.exit(from: "door"))
        #expect(exit.event.reason == .timeout)
        #expect(exit.known >= 4_900 + 4_000 && exit.known < 4_900 + 5_000)
        var booth = Walk(["door": .init(absenceTimeout: 4_000)])
        booth.hear(from: 0, to: 5_000, ["booth": -60])
        booth.wait(until: 30_000)
        let boothExit = try #require(booth.exit(from: "booth"))
        #expect(boothExit.known >= 4_900 + 15_000, "other beacons keep the configured 15 s")
    }

    @Test func nobodyTeleportsAcrossTheHall() throws {
        // a - b - c in a row: a move from a to c is a jump (4 + 6 dB margin, 3 + 3 s dwell).
        let row: [String: PlacePolicies.Policy] = ["b": .init(neighbours: ["a", "c"])]
        #expect(Self.move(from: "a", to: "c", lead: 8).enter(at: "c") != nil, "without adjacency 8 dB is a move")
        let jump = Self.move(from: "a", to: "c", lead: 8, places: row)
        #expect(jump.enter(at: "c") == nil, "8 dB is not enough for a jump")
        let far = try #require(Self.move(from: "a", to: "c", lead: 12, places: row).enter(at: "c"))
        #expect(far.known - 10_000 >= 6_000 && far.known - 10_000 < 7_000)
        let next = try #require(Self.move(from: "a", to: "b", lead: 8, places: row).enter(at: "b"))
        #expect(next.known - 10_000 >= 3_000 && next.known - 10_000 < 4_000, "neighbours move as without adjacency")
    }

    @Test func aNeighbourClearOfItsMarginWinsOverAJumpThatIsNot() throws {
        // c (not next to a) is nearest by 9 dB, b (next to a) by 6: the user moves to b.
        var walk = Walk(["b": .init(neighbours: ["a", "c"])])
        walk.hear(from: 0, to: 10_000, ["a": -60, "b": -80, "c": -80])
        walk.hear(from: 10_000, to: 20_000, ["a": -70, "b": -64, "c": -61])
        #expect(walk.enter(at: "b") != nil)
        #expect(walk.enter(at: "c") == nil)
    }

    @Test func aJumpWaitsItsWholeDwellFromWhenItTookOverFromANeighbour() throws {
        // b (next to a) beats a by 6 dB from 10 s; from 12.5 s c (not next to a) beats it by 12,
        // past the jump's 10: the wait b began does not count for the jump, which needs 6 s of its own.
        var walk = Walk(["b": .init(neighbours: ["a", "c"])])
        walk.hear(from: 0, to: 10_000, ["a": -60, "b": -80, "c": -80])
        walk.hear(from: 10_000, to: 12_500, ["a": -70, "b": -64, "c": -80])
        walk.hear(from: 12_500, to: 30_000, ["a": -70, "b": -64, "c": -58])
        let jump = try #require(walk.enter(at: "c"))
        #expect(jump.known >= 18_500 && jump.known < 19_500, "known at \(jump.known)")
        #expect(walk.enter(at: "b") == nil)
    }

    @Test func theEvidenceDecisionFollowsTheMovesMarginAndScalesItsEvidenceByTheDwell() throws {
        let row: [String: PlacePolicies.Policy] = ["b": .init(neighbours: ["a", "c"])]
        #expect(Self.move(from: "a", to: "c", lead: 8, places: row, decision: .evidence).enter(at: "c") == nil)
        let plain = try #require(Self.move(from: "a", to: "c", lead: 20, decision: .evidence).enter(at: "c"))
        let jump = try #require(Self.move(from: "a", to: "c", lead: 20, places: row, decision: .evidence).enter(at: "c"))
        // 12 dB·s at 16 dB/s is 0.75 s; a jump needs 24 dB·s at 10 dB/s, 2.4 s.
        #expect(plain.known - 10_000 <= 1_000)
        #expect(jump.known - 10_000 >= 2_300 && jump.known - 10_000 <= 2_600)
    }

    @Test func newPoliciesApplyToUsersAlreadyThere() throws {
        var walk = Walk()
        walk.hear(from: 0, to: 10_000, ["desk": -60, "aisle": -80])
        walk.engine.setPlaces(PlacePolicies(["desk": .init(switchMargin: 10)]))
        walk.hear(from: 10_000, to: 30_000, ["desk": -70, "aisle": -63])
        #expect(walk.enter(at: "aisle") == nil)
    }
}
