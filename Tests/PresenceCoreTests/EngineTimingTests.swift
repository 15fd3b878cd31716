import Testing
@testable import PresenceCore

/// Each margin and duration of the engine changes its decisions as the README's "Presence
/// semantics" table says; the defaults are covered by `PresenceEngineTests`, here each flag takes
/// another value (the margins, dwells and sightings under the `dwell` decision that the flags
/// were made for; the `hmm` decision's own are in `HMMDecisionTests`). Readings are unsmoothed (an exponential smoother with no time constant) where
/// the figures matter, so that a reading's value is the smoothed value.
@Suite struct EngineTimingTests {
    static func unsmoothed(_ configuration: inout EngineConfiguration) {
        configuration.smoothing.method = .exponential
        configuration.smoothing.timeConstant = 0
    }

    /// Alice at a (-60 dBm) for 5 s; then b is 6 dB nearer (a -66 dBm, b -60 dBm).
    @Test(arguments: [(4.0, true), (7.0, false)])
    func theSwitchMarginIsHowMuchNearerAnotherBeaconMustBe(_ margin: Double, _ moves: Bool) {
        var d = Drive {
            $0.decision = .dwell
            Self.unsmoothed(&$0)
            $0.switchMargin = margin
        }
        for t in stride(from: Int64(0), to: 5_000, by: 500) {
            d.hear("a", rssi: -60, at: t)
        }
        for t in stride(from: Int64(5_000), to: 30_000, by: 500) {
            d.hear("a", rssi: -66, at: t)
            d.hear("b", rssi: -60, at: t + 1)
        }
        #expect(d.events.map(\.beacon) == (moves ? ["a", "a", "b"] : ["a"]))
    }

    /// Alice at a (a -60 dBm, b -70 dBm, every 250 ms); from 10 s to 12 s the two swap.
    @Test(arguments: [(Int64(1_000), true), (3_000, false)])
    func theSwitchDwellIsHowLongAnotherBeaconMustStayNearer(_ dwell: Int64, _ moves: Bool) {
        var d = Drive {
            $0.decision = .dwell
            Self.unsmoothed(&$0)
            $0.switchDwell = dwell
        }
        for t in stride(from: Int64(0), to: 20_000, by: 250) {
            let swapped = (10_000 ..< 12_000).contains(t)
            d.hear("a", rssi: swapped ? -70 : -60, at: t)
            d.hear("b", rssi: swapped ? -60 : -70, at: t + 1)
        }
        #expect(d.events.map(\.beacon).prefix(3) == (moves ? ["a", "a", "b"] : ["a"]))
        if moves, let exit = d.events.dropFirst().first, let decided = d.decidedAt.dropFirst().first {
            #expect(decided - exit.at >= dwell, "decided after the dwell, dated to its start")
        }
    }

    /// Alice at a (a -60 dBm, b -80 dBm, every 500 ms) for 20 s; then the two swap for good. The
    /// smoothed estimates cross some seconds after the swap; the move is dated by the quick
    /// averages, within a second of it, under either decision.
    @Test(arguments: EngineConfiguration.Decision.allCases)
    func aMoveIsDatedToWhenTheQuickAveragesCrossedNotTheSmoothedOnes(_ decision: EngineConfiguration.Decision) throws {
        var d = Drive { $0.decision = decision }
        let settings = d.engine.configuration.smoothing
        var a: RSSISmoother?
        var b: RSSISmoother?
        var smoothedCrossing: Int64?
        for t in stride(from: Int64(0), to: 40_000, by: 500) {
            let swapped = t >= 20_000
            let (ra, rb) = swapped ? (-80.0, -60.0) : (-60.0, -80.0)
            d.hear("a", rssi: ra, at: t)
            d.hear("b", rssi: rb, at: t + 1)
            if a == nil { a = RSSISmoother(rssi: ra, at: t, settings: settings) } else { a?.update(rssi: ra, at: t, settings: settings) }
            if b == nil { b = RSSISmoother(rssi: rb, at: t + 1, settings: settings) } else { b?.update(rssi: rb, at: t + 1, settings: settings) }
            if smoothedCrossing == nil, let a, let b, b.value > a.value { smoothedCrossing = t + 1 }
        }
        let crossing = try #require(smoothedCrossing)
        #expect(crossing >= 21_000, "the smoothed estimates cross late enough for the test to mean something: \(crossing)")
        let move = try #require(d.events.first { $0.kind == .enter && $0.beacon == "b" }, "\(d.summary)")
        #expect((20_000 ... 21_000).contains(move.at), "dated \(move.at), smoothed crossing \(crossing)")
        #expect(d.events.first { $0.kind == .exit }?.at == move.at)
    }

    /// Someone passes a for 2 s and then stays at b (each -60 dBm while near, -80 dBm otherwise).
    @Test(arguments: [(Int64(1_000), "a"), (3_000, "b")])
    func theEnterDwellIsHowLongABeaconMustStayNearestBeforeTheEnter(_ dwell: Int64, _ entered: String) {
        var d = Drive {
            $0.decision = .dwell
            Self.unsmoothed(&$0)
            $0.enterDwell = dwell
        }
        for t in stride(from: Int64(0), to: 15_000, by: 250) {
            let atA = t < 2_000
            d.hear("a", rssi: atA ? -60 : -80, at: t)
            d.hear("b", rssi: atA ? -80 : -60, at: t + 1)
        }
        #expect(d.events.first?.kind == .enter && d.events.first?.beacon == entered, "\(d.summary)")
        #expect((d.decidedAt.first ?? 0) - (d.events.first?.at ?? 0) >= dwell)
    }

    /// A tag heard once a second at a.
    @Test(arguments: [2, 5])
    func theEnterSightingsAreHowOftenTheBeaconMustBeHeard(_ sightings: Int) {
        var short = Drive {
            $0.decision = .dwell
            $0.enterSightings = sightings
        }
        var enough = Drive {
            $0.decision = .dwell
            $0.enterSightings = sightings
        }
        for index in 0 ..< sightings {
            if index < sightings - 1 { short.hear("a", rssi: -60, at: Int64(index) * 1_000) }
            enough.hear("a", rssi: -60, at: Int64(index) * 1_000)
        }
        short.tick(to: 60_000)
        #expect(short.events.filter { $0.kind == .enter }.isEmpty, "entered after \(sightings - 1) sightings")
        #expect(enough.summary.first == "enter a @0")
        #expect(enough.decidedAt.first == Int64(sightings - 1) * 1_000, "decided at the last sighting it needed")
    }

    /// Alice at a until 5 s; from 6 s only b hears her, once a second. b cannot win while a's
    /// reading still counts: the move is dated to b's first sighting after a's went stale.
    @Test(arguments: [Int64(4_000), 8_000])
    func theStaleAfterIsHowLongAReadingKeepsItsBeacon(_ staleAfter: Int64) {
        var d = Drive {
            $0.decision = .dwell
            $0.staleAfter = staleAfter
        }
        for t in stride(from: Int64(0), through: 5_000, by: 1_000) {
            d.hear("a", rssi: -60, at: t)
        }
        for t in stride(from: Int64(6_000), through: 30_000, by: 1_000) {
            d.hear("b", rssi: -70, at: t)
        }
        let move = 5_000 + staleAfter + 1_000
        #expect(d.summary.prefix(3) == ["enter a @0", "exit a moved @\(move)", "enter b @\(move)"])
    }

    @Test(arguments: [Int64(5_000), 30_000])
    func theAbsenceTimeoutIsHowLongAfterTheLastSightingTheExitIsDecided(_ timeout: Int64) {
        var d = Drive { $0.absenceTimeout = timeout }
        for t in stride(from: Int64(0), through: 20_000, by: 1_000) {
            d.hear("a", rssi: -60, at: t)
        }
        d.tick(to: 20_000 + timeout - 1)
        #expect(d.summary == ["enter a @0"])
        d.tick(to: 20_000 + timeout)
        #expect(d.summary == ["enter a @0", "exit a timeout @20000"])
    }

    /// node-a hears Alice until 10 s, and its status says offline at 10.1 s; nobody hears her after.
    /// Her session is held for the hold after the node went offline (or the absence timeout after
    /// her last sighting, whichever ends later), then times out at that sighting.
    @Test(arguments: [Int64(5_000), 30_000, 60_000])
    func theNodeDownHoldIsHowLongAnOfflineNodesSessionsAreHeld(_ hold: Int64) {
        var d = Drive { $0.nodeDownHold = hold }
        for t in stride(from: Int64(0), through: 10_000, by: 500) {
            d.hear("a", rssi: -60, at: t)
        }
        d.engine.setNode("node-a", offline: true, at: 10_100)
        for t in stride(from: Int64(10_100), through: 200_000, by: 100) {
            d.tick(to: t)
        }
        #expect(d.summary == ["enter a @0", "exit a timeout @10000"])
        let due = max(10_000 + 15_000, 10_100 + hold)
        #expect((due ... due + 100).contains(d.decidedAt.last ?? 0), "decided at \(d.decidedAt.last ?? 0), due at \(due)")
    }
}
