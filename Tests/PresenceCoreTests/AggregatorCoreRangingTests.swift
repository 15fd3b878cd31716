import Foundation
import Testing
@testable import PresenceCore

/// The ranging readout: a present user's retained state says how near they are to their beacon,
/// refreshed at most once per interval and only when it changed.
@Suite struct AggregatorCoreRangingTests {
    static let start = AggregatorCoreTests.start
    static let topics = AggregatorCoreTests.topics

    /// Alice at beacon a, walking away from its node: her RSSI falls from -50 to -70 dBm over 20 s.
    /// Returns her published user states with when each was decided.
    static func walkAway(rangingInterval: Int64) -> [(at: Int64, state: [String: Any])] {
        var configuration = AggregatorCore.Configuration()
        configuration.catchUp = false
        configuration.topics = topics
        configuration.rangingInterval = rangingInterval
        var core = AggregatorCore(configuration: configuration, registry: PresencePipelineTests.registry, now: start)
        var states: [(at: Int64, state: [String: Any])] = []
        func note(_ actions: [AggregatorCore.Action]) {
            for record in Published.records(actions) {
                for state in Published.objects(record.messages, on: topics.userState("alice")) { states.append((record.decidedAt, state)) }
            }
        }
        note(core.resume(at: start))
        for step in 0 ..< 100 {
            let t = start + Int64(step) * 200
            let rssi = -50 - step / 5
            note(AggregatorCoreTests.receive(&core, topics.sightings(node: "node-a"), PresencePipelineTests.batch("node-a", seq: Int64(step), at: t, rssi: rssi),
                                             at: t))
            note(core.tick(at: t + 100))
        }
        return states
    }

    @Test func theDistanceFollowsTheWalkAtMostOncePerIntervalAndOnlyWhenItChanged() throws {
        let states = Self.walkAway(rangingInterval: 1_000)
        let ranged = states.filter { $0.state["distance"] is Double }
        try #require(ranged.count >= 5, "\(states.map(\.state))")
        let distances = ranged.compactMap { $0.state["distance"] as? Double }
        #expect(distances.last ?? 0 > 4 * (distances.first ?? .infinity), "the distance grows as she walks away: \(distances)")
        #expect(zip(distances, distances.dropFirst()).allSatisfy { $1 >= $0 * 0.95 }, "\(distances)")
        for (before, after) in zip(ranged, ranged.dropFirst()) {
            #expect(after.at - before.at >= 1_000, "two refreshes \(after.at - before.at) ms apart")
        }
        #expect(ranged.allSatisfy { ($0.state["beacon"] as? String) == "a" && $0.state["rssi"] is Double && $0.state["proximity"] is String })
        #expect(ranged.count < 20, "a refresh only when the reading changed: \(ranged.count) in 20 s")
        let enter = try #require(states.first { $0.state["beacon"] as? String == "a" })
        #expect(enter.state["distance"] is Double, "the enter's state carries its reading")
    }

    @Test func zeroTurnsItOff() {
        let states = Self.walkAway(rangingInterval: 0)
        #expect(!states.isEmpty)
        #expect(states.allSatisfy { $0.state["distance"] == nil && $0.state["rssi"] == nil })
    }
}
