import Testing
@testable import PresenceCore

/// How soon the pipeline publishes a decision: the pipeline's clock when the event comes out, as
/// the aggregator's loop drives it (each batch at its arrival, and a tick at every multiple of the
/// tick interval), against the event's `at`, which is back-dated to when the change began.
///
/// No slack beyond one tick is needed: `at` is itself a moment of the grid (the watermark, tick −
/// lateness, of the first tick that takes the change in), and batches arrive 20-30 ms after their
/// sightings, well within the lateness, so no decision waits for a late batch. Sightings are 700 ms
/// apart, so that a decision that waited for the next sighting instead of its deadline would be
/// late by up to 600 ms.
@Suite struct PipelineTimingTests {
    static let start: Int64 = 1_763_774_700_000
    /// Alice's walk: her first sighting, when she moves from a to b, and her last sighting.
    static let first = start + 50
    static let switchAt = first + 15 * 700
    static let last = first + 29 * 700

    /// An event and the pipeline's clock when it came out.
    struct Emitted {
        var event: PresenceEvent
        var clock: Int64
    }

    /// Alice at a (node-a hears her at -55 dBm, node-b at -70 dBm) from `first`, at b from
    /// `switchAt` (the two swap) until `last`; then the clock runs on for 30 s. Unsmoothed, so that
    /// the move starts with the first sighting after the swap.
    static func walk(lateness: Int64) -> (configuration: PresencePipeline.Configuration, emitted: [Emitted]) {
        var configuration = PresencePipeline.Configuration()
        configuration.lateness = lateness
        configuration.engine.smoothing.method = .exponential
        configuration.engine.smoothing.timeConstant = 0
        var arrivals: [(node: String, payload: [UInt8], at: Int64)] = []
        for (seq, t) in stride(from: first, through: last, by: 700).enumerated() {
            let atA = t < switchAt
            arrivals.append(("node-a", PresencePipelineTests.batch("node-a", seq: Int64(seq), at: t, rssi: atA ? -55 : -70), t + 20))
            arrivals.append(("node-b", PresencePipelineTests.batch("node-b", seq: Int64(seq), at: t, rssi: atA ? -70 : -55), t + 30))
        }
        var pipeline = PresencePipeline(configuration: configuration, registry: PresencePipelineTests.registry, start: start)
        var emitted: [Emitted] = []
        var next = arrivals.startIndex
        for tick in stride(from: start + configuration.tickInterval, through: last + 30_000, by: Int(configuration.tickInterval)) {
            while next < arrivals.endIndex, arrivals[next].at <= tick {
                let arrival = arrivals[next]
                emitted += pipeline.receive(arrival.payload, node: Substring(arrival.node), at: arrival.at).events.map { Emitted(event: $0, clock: arrival.at) }
                next += 1
            }
            emitted += pipeline.advanceClock(to: tick).map { Emitted(event: $0, clock: tick) }
        }
        return (configuration, emitted)
    }

    @Test(arguments: [Int64(1_000), 2_500])
    func aClearEnterComesOutWithinItsDecisionAndTheLatenessOfItsStart(_ lateness: Int64) throws {
        let (configuration, emitted) = Self.walk(lateness: lateness)
        let enter = try #require(emitted.first)
        #expect(enter.event.kind == .enter && enter.event.beacon == "a")
        #expect((Self.first ... Self.first + configuration.tickInterval).contains(enter.event.at), "dated to her first sighting")
        #expect(enter.event.at < enter.clock, "back-dated")
        let bound = enter.event.at + Self.decisionDelay(configuration.engine, dwell: configuration.engine.enterDwell) + lateness
            + configuration.tickInterval
        #expect(enter.clock <= bound, "came out \(enter.clock - enter.event.at) ms after its at")
    }

    @Test(arguments: [Int64(1_000), 2_500])
    func aClearMoveComesOutWithinItsDecisionAndTheLatenessOfItsStart(_ lateness: Int64) throws {
        let (configuration, emitted) = Self.walk(lateness: lateness)
        let move = emitted.filter { $0.event.reason == .moved || ($0.event.kind == .enter && $0.event.beacon == "b") }
        try #require(move.count == 2)
        let (exit, enter) = (move[0], move[1])
        #expect(exit.event.beacon == "a" && enter.event.beacon == "b")
        #expect(exit.clock == enter.clock && exit.event.at == enter.event.at, "a move's exit and enter come out together, with one at")
        let grain = configuration.engine.decision == .hmm ? PlaceBelief.step : configuration.tickInterval
        #expect((Self.switchAt - grain ... Self.switchAt + grain).contains(enter.event.at), "dated to the swap")
        #expect(enter.event.at < enter.clock, "back-dated")
        let bound = Self.switchAt + Self.decisionDelay(configuration.engine, dwell: configuration.engine.switchDwell) + lateness
            + configuration.tickInterval
        #expect(enter.clock <= bound, "came out \(enter.clock - Self.switchAt) ms after the swap")
    }

    /// How long after its start a clear case is decided: the dwell under the `dwell` decision;
    /// under `hmm`, the clear span, the step it ends in and the step that closes it.
    static func decisionDelay(_ engine: EngineConfiguration, dwell: Int64) -> Int64 {
        engine.decision == .hmm ? PresenceEngine.clearSpan + 2 * PlaceBelief.step : dwell
    }

    @Test(arguments: [Int64(1_000), 2_500])
    func aTimeoutExitComesOutOnceTheAbsenceTimeoutAndTheLatenessHavePassed(_ lateness: Int64) throws {
        let (configuration, emitted) = Self.walk(lateness: lateness)
        let exit = try #require(emitted.last)
        #expect(exit.event.kind == .exit && exit.event.reason == .timeout && exit.event.beacon == "b")
        #expect(exit.event.at == Self.last, "dated to her last sighting")
        let due = Self.last + configuration.engine.absenceTimeout + lateness
        #expect(exit.clock >= due, "came out \(due - exit.clock) ms early")
        #expect(exit.clock <= due + configuration.tickInterval, "came out \(exit.clock - due) ms late")
    }

    /// node-a's clock runs 1 s behind: its sightings and `sent` times say 1 s earlier than they
    /// were heard. Corrected, the enter is dated in the pipeline's time (from her first sighting
    /// on); left alone, in the node's (before it).
    @Test(arguments: [(Int64(500), true), (2_000, false)])
    func theClockSkewIsHowFarANodesClockMayBeOffBeforeItIsCorrected(_ threshold: Int64, _ corrected: Bool) throws {
        var configuration = PresencePipeline.Configuration()
        configuration.skewThreshold = threshold
        var pipeline = PresencePipeline(configuration: configuration, registry: PresencePipelineTests.registry, start: Self.start)
        var events: [PresenceEvent] = []
        for (seq, t) in stride(from: Self.start, to: Self.start + 5_000, by: 500).enumerated() {
            let payload = PresencePipelineTests.batch("node-a", seq: Int64(seq), at: t - 1_000, rssi: -55, sent: t - 990)
            events += pipeline.receive(payload, node: "node-a", at: t + 30).events
        }
        events += pipeline.advanceClock(to: Self.start + 10_000)
        let enter = try #require(events.first)
        #expect((enter.at >= Self.start) == corrected, "enter at \(enter.at - Self.start) ms")
    }
}
