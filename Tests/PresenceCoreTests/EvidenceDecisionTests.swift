import Testing
@testable import PresenceCore

/// The `evidence` decision: a challenger's lead beyond the margin is summed over time, so that a
/// clear lead moves sooner than a slight one and a moment's doubt does not start the count again.
@Suite struct EvidenceDecisionTests {
    /// One user whose readings are taken as heard (no smoothing), decided every 100 ms as the
    /// pipeline does; each event is kept with the moment it came out.
    private struct Walk {
        var engine: PresenceEngine
        var emitted: [(event: PresenceEvent, at: Int64)] = []

        init(_ decision: EngineConfiguration.Decision, margin: Double = 4, evidence: Double = 12) {
            var configuration = EngineConfiguration()
            configuration.decision = decision
            configuration.switchMargin = margin
            configuration.switchEvidence = evidence
            configuration.smoothing.method = .exponential
            configuration.smoothing.timeConstant = 0
            engine = PresenceEngine(configuration: configuration, now: 0)
        }

        /// Every 100 ms from `start` up to `end`: a reading of each beacon in `rssi` (at that time).
        mutating func hear(from start: Int64, to end: Int64, _ rssi: (Int64) -> [String: Double]) {
            for time in stride(from: start, to: end, by: 100) {
                for (beacon, value) in rssi(time).sorted(by: { $0.key < $1.key }) {
                    engine.ingest(Observation(time: time, user: "alice", device: "tag-1", beacon: beacon, venue: "expo",
                                              node: "node-\(beacon)", rssi: value, tx: -59))
                }
                for event in engine.advance(to: time) { emitted.append((event, time)) }
            }
        }

        /// The move to `beacon`: its `at` and the moment it came out.
        func move(to beacon: String) -> (at: Int64, known: Int64)? {
            emitted.first { $0.event.kind == .enter && $0.event.beacon == beacon }.map { ($0.event.at, $0.at) }
        }
    }

    /// At a for 10 s, then b nearer by `lead` dB from 10 s on.
    private static func walk(_ decision: EngineConfiguration.Decision, lead: Double) -> Walk {
        var walk = Walk(decision)
        walk.hear(from: 0, to: 10_000) { _ in ["a": -60, "b": -75] }
        walk.hear(from: 10_000, to: 30_000) { _ in ["a": -70, "b": -70 + lead] }
        return walk
    }

    @Test func aClearLeadMovesSoonerThanASlightOne() throws {
        let clear = try #require(Self.walk(.evidence, lead: 20).move(to: "b"))
        let slight = try #require(Self.walk(.evidence, lead: 6).move(to: "b"))
        #expect(clear.at == 10_000 && slight.at == 10_000, "both dated to when b became the nearer")
        // 12 dB·s at (20 - 4) dB/s takes 0.75 s; at (6 - 4) dB/s, 6 s.
        #expect(clear.known - 10_000 <= 1_000)
        #expect(slight.known - 10_000 >= 5_900 && slight.known - 10_000 <= 6_100)
        let dwell = try #require(Self.walk(.dwell, lead: 20).move(to: "b"))
        #expect(dwell.known - 10_000 >= 3_000, "the dwell rule waits its 3 s whatever the lead")
        #expect(clear.known < dwell.known)
    }

    @Test func aLeadWithinTheMarginNeverMoves() {
        let walk = Self.walk(.evidence, lead: 3.5)
        #expect(walk.move(to: "b") == nil)
        #expect(walk.emitted.map(\.event.kind) == [.enter])
    }

    @Test func aMomentsDoubtDoesNotStartTheCountAgain() throws {
        func doubting(_ decision: EngineConfiguration.Decision) -> Walk {
            var walk = Walk(decision)
            walk.hear(from: 0, to: 10_000) { _ in ["a": -60, "b": -75] }
            // b leads by 10 dB, except for 300 ms every 2 s when it falls level with a.
            walk.hear(from: 10_000, to: 30_000) { time in (time - 10_000) % 2_000 >= 1_700 ? ["a": -70, "b": -70] : ["a": -70, "b": -60] }
            return walk
        }
        let evidence = try #require(doubting(.evidence).move(to: "b"))
        #expect(evidence.at == 10_000)
        #expect(evidence.known - 10_000 <= 2_600, "12 dB·s at 6 dB/s: 2 s of lead, less what the doubt took back")
        #expect(doubting(.dwell).move(to: "b") == nil, "the dwell rule starts again at every doubt and never gets its 3 s")
    }

    @Test func evidenceThatFallsToNothingStartsAgainFromTheNextLead() throws {
        var walk = Walk(.evidence)
        walk.hear(from: 0, to: 10_000) { _ in ["a": -60, "b": -75] }
        walk.hear(from: 10_000, to: 11_000) { _ in ["a": -70, "b": -60] }
        walk.hear(from: 11_000, to: 20_000) { _ in ["a": -60, "b": -70] }
        walk.hear(from: 20_000, to: 30_000) { _ in ["a": -70, "b": -60] }
        let move = try #require(walk.move(to: "b"))
        #expect(move.at == 20_000, "the lead at 10 s was taken back: the case starts at 20 s")
        #expect(walk.emitted.filter { $0.event.kind == .enter }.count == 2)
    }
}
