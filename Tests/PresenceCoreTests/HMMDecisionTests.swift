import Foundation
import Testing
@testable import PresenceCore

/// The `hmm` decision: a hidden-Markov model over the places a user is heard near, smoothed over
/// a lag, its enters and moves dated by the smoothed path. The contract's presence promises
/// (enter within 3 s, no switch under ±4 dB noise between beacons 10 dB apart, a clear move within
/// 6 s) and what it adds: clear moves soon, walk-bys that are not visits, and a first enter that
/// names the booth nearest the person when it is dated.
@Suite struct HMMDecisionTests {
    /// One user heard by a node at each beacon, decided every 100 ms as the pipeline does (the
    /// watermark aside); each event is kept with the moment it came out.
    private struct Walk {
        var engine: PresenceEngine
        var emitted: [(event: PresenceEvent, at: Int64)] = []
        var random: RandomSource
        /// Where each beacon and its node are along a line (x, m), when the venue's layout is known.
        var layout: [String: Double] = [:]

        init(seed: UInt64 = 7, configure: (inout EngineConfiguration) -> Void = { _ in }) {
            var configuration = EngineConfiguration()
            configuration.decision = .hmm
            configure(&configuration)
            engine = PresenceEngine(configuration: configuration, now: 0)
            random = RandomSource(seed: seed)
        }

        /// From `start` up to `end`, every `every` ms: a reading of each beacon `rssi` gives at
        /// that time (nil: not heard), with uniform noise of ±`noise` dB.
        mutating func hear(from start: Int64, to end: Int64, every: Int64 = 500, noise: Double = 0, _ rssi: (Int64) -> [String: Double?]) {
            for time in stride(from: start, to: end, by: 100) {
                if (time - start) % every == 0 {
                    for (offset, (beacon, value)) in rssi(time).sorted(by: { $0.key < $1.key }).enumerated() {
                        guard let value else { continue }
                        let place = layout[beacon].map { Coordinates(x: $0, y: 0) }
                        let link = ObservedLink(user: "alice", device: "tag-1", beacon: beacon, venue: "expo", node: "node-\(beacon)",
                                                anchor: place, place: place)
                        engine.ingest(Observation(time: time + Int64(offset), link: link, rssi: value + (random.uniform() * 2 - 1) * noise, tx: -59,
                                                  txKnown: true))
                    }
                }
                for event in engine.advance(to: time) { emitted.append((event, time)) }
            }
        }

        var enters: [(event: PresenceEvent, at: Int64)] { emitted.filter { $0.event.kind == .enter } }

        /// Each stay: its beacon, from its enter's `at` to its exit's (or `end`).
        func stays(until end: Int64) -> [(beacon: String, from: Int64, to: Int64)] {
            var stays: [(beacon: String, from: Int64, to: Int64)] = []
            for (event, _) in emitted {
                if event.kind == .enter {
                    stays.append((event.beacon, event.at, end))
                } else if let last = stays.indices.last, stays[last].beacon == event.beacon {
                    stays[last].to = event.at
                }
            }
            return stays
        }
    }

    /// The path-loss model the simulations use (n = 2, −59 dBm at 1 m); nil beyond `range` m.
    private static func rssi(at distance: Double, range: Double = 15) -> Double? {
        guard distance <= range else { return nil }
        return -59 - 20 * log10(max(0.5, distance))
    }

    @Test func entersWithinThreeSecondsOfSteadyReceptionDatedToItsStart() throws {
        var walk = Walk()
        walk.hear(from: 10_000, to: 20_000, every: 1_000) { _ in ["a": -60] }
        let enter = try #require(walk.enters.first)
        #expect(enter.event.beacon == "a")
        #expect(enter.event.at == 10_000, "dated to the first sighting")
        #expect(enter.at - 10_000 <= 3_000, "decided \(enter.at - 10_000) ms after steady reception began")
    }

    @Test func withNoEnterDwellOneSightingEntersAtTheNextStep() throws {
        var walk = Walk {
            $0.enterDwell = 0
            $0.enterSightings = 1
        }
        walk.hear(from: 10_000, to: 10_100) { _ in ["a": -45] }
        walk.hear(from: 10_100, to: 12_000) { _ in [:] }
        let enter = try #require(walk.enters.first)
        #expect(enter.event.beacon == "a" && enter.event.at == 10_000 && enter.at <= 10_600)
        var settling = Walk { $0.enterSightings = 1 }
        settling.hear(from: 10_000, to: 10_100) { _ in ["a": -45] }
        settling.hear(from: 10_100, to: 30_000) { _ in [:] }
        #expect(settling.enters.isEmpty, "one sighting does not settle a place")
    }

    @Test func aClearMoveIsDecidedWithinThreeAndAHalfSecondsAndASlightOneLater() throws {
        func move(lead: Double) throws -> (at: Int64, known: Int64) {
            var walk = Walk()
            walk.hear(from: 0, to: 20_000, noise: 2) { _ in ["a": -60, "b": -70] }
            walk.hear(from: 20_000, to: 60_000, noise: 2) { _ in ["a": -65, "b": -65 + lead] }
            let moved = try #require(walk.enters.first { $0.event.beacon == "b" })
            #expect(walk.enters.count == 2, "one enter, one move")
            return (moved.event.at, moved.at)
        }
        let clear = try move(lead: 10)
        #expect(clear.known - 20_000 <= 3_500, "a 10 dB move decided \(clear.known - 20_000) ms after it happened")
        #expect(abs(clear.at - 20_000) <= 1_000, "dated \(clear.at - 20_000) ms off the move")
        let slight = try move(lead: 5)
        #expect(slight.known > clear.known, "a slight lead waits for more evidence")
        #expect(slight.known - 20_000 <= 10_000)
    }

    @Test func twoBeaconsTenDecibelsApartUnderFourDecibelNoiseNeverSwitchInAnHour() {
        var walk = Walk(seed: 42)
        walk.hear(from: 0, to: 3_600_000, every: 1_000, noise: 4) { _ in ["a": -60, "b": -70] }
        #expect(walk.emitted.map { "\($0.event.kind) \($0.event.beacon)" } == ["enter a"])
    }

    @Test func aMomentsShadowDoesNotMove() {
        var walk = Walk()
        // b comes 8 dB nearer for 1.5 s every 20 s: a body between the tag and a's node.
        walk.hear(from: 0, to: 120_000) { time in time % 20_000 >= 10_000 && time % 20_000 < 11_500 ? ["a": -70, "b": -62] : ["a": -60, "b": -70] }
        #expect(walk.emitted.map { "\($0.event.kind) \($0.event.beacon)" } == ["enter a"])
    }

    /// A person stands at a, nearer a's node than b's by 4 dB; every 40 s they turn their back to
    /// a's node for 8 s, which takes 6 dB from it, so that b is heard 2 dB nearer for those 8 s
    /// (under ±4 dB of noise). Seconds of the same lead are one fade, not seconds of fresh
    /// evidence of a move: nobody moves.
    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func anEightSecondFadeOnTheNodesBehindAPersonMovesNobody(seed: UInt64) {
        var walk = Walk(seed: seed)
        walk.hear(from: 0, to: 400_000, noise: 4) { time in
            let turned = time % 40_000 >= 20_000 && time % 40_000 < 28_000
            return ["a": turned ? -70 : -64, "b": -68, "c": -75]
        }
        #expect(walk.emitted.map { "\($0.event.kind) \($0.event.beacon)" } == ["enter a"])
    }

    /// Booths every 4 m along an aisle; 60 s at a, a walk at 1.4 m/s past b to c, 60 s at c.
    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func aWalkPastABoothIsNotAVisit(seed: UInt64) {
        let booths = ["a": 0.0, "b": 4.0, "c": 8.0]
        let walkStart: Int64 = 60_000, walkEnd: Int64 = 60_000 + Int64(8 / 1.4 * 1000)
        func position(_ time: Int64) -> Double {
            time <= walkStart ? 0 : time >= walkEnd ? 8 : 8 * Double(time - walkStart) / Double(walkEnd - walkStart)
        }
        var walk = Walk(seed: seed)
        walk.hear(from: 0, to: walkEnd + 60_000, noise: 3) { time in
            booths.mapValues { Self.rssi(at: (($0 - position(time)) * ($0 - position(time)) + 1).squareRoot()) }
        }
        let stays = walk.stays(until: walkEnd + 60_000)
        #expect(stays.map(\.beacon).first == "a" && stays.map(\.beacon).last == "c")
        // An expo counts a stay as a visit from 15 s (`presence.settings.visit_min_dwell`).
        #expect(stays.allSatisfy { $0.beacon != "b" || $0.to - $0.from < 15_000 }, "b counted as a visit: \(stays)")
    }

    /// Someone walks in from 10 m before the first of four booths 5 m apart, down the aisle to the
    /// last, and stays there: their first enter names the booth nearest them when it is dated.
    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6, 7, 8])
    func anEntranceWalksFirstEnterNamesTheBoothNearestWhenDated(seed: UInt64) throws {
        let booths = ["a": 0.0, "b": 5.0, "c": 10.0, "d": 15.0]
        let speed = 1.4
        let arrive = Int64(25 / speed * 1000)
        func position(_ time: Int64) -> Double {
            time >= arrive ? 15 : -10 + speed * Double(time) / 1000
        }
        var walk = Walk(seed: seed)
        walk.hear(from: 0, to: arrive + 60_000, noise: 4) { time in
            booths.mapValues { Self.rssi(at: (($0 - position(time)) * ($0 - position(time)) + 2).squareRoot()) }
        }
        let first = try #require(walk.enters.first)
        let nearest = booths.min { abs($0.value - position(first.event.at)) < abs($1.value - position(first.event.at)) }?.key
        #expect(first.event.beacon == nearest, "entered \(first.event.beacon) at \(position(first.event.at)) m")
    }

    /// Someone comes in and stands 2 m from booth b, 4 m from a. The nodes report in turn, a's
    /// first: for half a second only a is heard. A node not yet heard from is not one that does
    /// not hear them, so a's head start does not settle the enter.
    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func theFirstNodeHeardGivesItsBoothNoHeadStart(seed: UInt64) throws {
        let booths = ["a": 0.0, "b": 6.0]
        func heard(_ beacons: [String]) -> [String: Double?] {
            Dictionary(uniqueKeysWithValues: beacons.map { ($0, Self.rssi(at: ((booths[$0]! - 4) * (booths[$0]! - 4) + 1).squareRoot())) })
        }
        var walk = Walk(seed: seed)
        walk.hear(from: 10_000, to: 10_600, every: 1_000, noise: 1) { _ in heard(["a"]) }
        walk.hear(from: 10_600, to: 40_600, every: 1_000, noise: 1) { _ in heard(["a", "b"]) }
        let first = try #require(walk.enters.first)
        #expect(first.event.beacon == "b", "entered \(first.event.beacon) first: \(walk.emitted.map { "\($0.event.kind) \($0.event.beacon)" })")
    }

    /// Five booths 5 m apart along an aisle, a node at each, the layout weighed: 30 s standing 1 m
    /// from b, then 30 s by d. Every node's reading counts, and the places are still b, then d.
    @Test(arguments: [UInt64(1), 2, 3])
    func withTheLayoutWeighedTheRightBoothsWinAndAClearMoveComesSoon(seed: UInt64) throws {
        let booths = ["a": 0.0, "b": 5.0, "c": 10.0, "d": 15.0, "e": 20.0]
        var walk = Walk(seed: seed) { $0.layoutWeight = 0.5 }
        walk.layout = booths
        func heard(at x: Double) -> [String: Double?] {
            booths.mapValues { Self.rssi(at: (($0 - x) * ($0 - x) + 1).squareRoot(), range: 30) }
        }
        walk.hear(from: 0, to: 30_000, noise: 2) { _ in heard(at: 5) }
        walk.hear(from: 30_000, to: 60_000, noise: 2) { _ in heard(at: 15) }
        #expect(walk.emitted.map { "\($0.event.kind) \($0.event.beacon)" } == ["enter b", "exit b", "enter d"])
        let moved = try #require(walk.enters.last)
        #expect(moved.at - 30_000 <= 4_000, "the move decided \(moved.at - 30_000) ms after it happened")
    }

    @Test func withTheLayoutWeighedTwoBeaconsTenDecibelsApartNeverSwitch() {
        var walk = Walk(seed: 42) { $0.layoutWeight = 0.5 }
        walk.layout = ["a": 0, "b": 6, "c": 12]
        walk.hear(from: 0, to: 1_800_000, every: 1_000, noise: 4) { _ in ["a": -60, "b": -70, "c": -76] }
        #expect(walk.emitted.map { "\($0.event.kind) \($0.event.beacon)" } == ["enter a"])
    }
}
