import Foundation
import PresenceCore
import PresenceMQTT
import Testing

extension EndToEndTests {
    /// `--self-calibrate` against the real executables: node offsets fitted from node beacons are
    /// stored, and a restarted aggregator applies them from its start.
    @Suite struct AggregatorCalibrationTests {
        /// Four nodes at the corners of a 6 × 10 m hall, their gains uniform in ±4 dB, each
        /// transmitting its node beacon every second.
        static func scenario() -> Scenario {
            var radio = Scenario.Radio()
            radio.nodeGainSigma = 0
            radio.nodeGainSpread = 4
            radio.shadowingSigma = 2
            radio.nodeBeaconInterval = 1_000
            let nodes = [("node-a", 0.0, 0.0), ("node-b", 6, 0), ("node-c", 0, 10), ("node-d", 6, 10)].map { Scenario.Node(key: $0.0, x: $0.1, y: $0.2) }
            return Scenario(venue: "hall", seed: 31, radio: radio, beacons: [], nodes: nodes, people: [])
        }

        /// The calibration part of the latest stats among `messages`: readings taken, and offsets by node.
        static func calibration(in messages: ArraySlice<MQTTMessage>, _ h: PipelineHarness) -> (readings: Int, offsets: [String: Double])? {
            guard let stats = messages.last(where: { $0.topic == h.topics.aggregatorStats }),
                  let object = try? JSONSerialization.jsonObject(with: Data(stats.payload)) as? [String: Any],
                  let calibration = object["calibration"] as? [String: Any], let readings = calibration["readings"] as? Int,
                  let offsets = calibration["offsets_db"] as? [String: Any] else { return nil }
            return (readings, offsets.compactMapValues { ($0 as? NSNumber)?.doubleValue })
        }

        @Test func fittedOffsetsAreStoredAndSurviveARestart() async throws {
            let h = try PipelineHarness("calibration")
            try h.ctlOK("migrate")
            try h.ctlOK("venue", "add", "hall")
            let scenario = Self.scenario()
            for node in scenario.nodes {
                try h.ctlOK("node", "add", node.key, "--venue", "hall", "--x", "\(node.x)", "--y", "\(node.y)")
            }
            let bus = try await h.recorder()
            // A first run opens the aggregator's broker session and saves its clock.
            var aggregator = try h.startAggregator(["--self-calibrate"])
            try await bus.wait(15, for: "the aggregator's online status") { messages in
                messages.contains { $0.topic == h.topics.aggregatorStatus && $0.text.contains("\"online\"") }
            }
            #expect(await aggregator.stop() == 0)

            // While it is down, the broker keeps three minutes of node beacons from the past
            // (batches every 2 s); the next start drains them in their own time, as after any
            // downtime, so that the minute between fits passes in seconds.
            _ = try h.rows("UPDATE presence.aggregator_clock SET clock = now() - interval '4 minutes'")
            let resumed = Int64(try h.rows("SELECT (EXTRACT(EPOCH FROM clock) * 1000)::bigint FROM presence.aggregator_clock").first ?? "") ?? 0
            var simulator = try VenueSimulator(scenario: scenario, start: resumed)
            let publisher = try await h.publisher()
            var messages: [MQTTMessage] = []
            for step in 1 ... 90 {
                let time = resumed + Int64(step) * 2_000
                let heard = simulator.advance(to: time)
                for node in scenario.nodes {
                    let batch = SightingBatch(node: node.key, seq: Int64(step), sent: time, sightings: heard.filter { $0.node == node.key }.map(\.sighting))
                    messages.append(MQTTMessage(topic: h.topics.sightings(node: node.key), payload: batch.encoded(), qos: 1))
                }
            }
            // In order, as the nodes published them: a batch of the third minute published before
            // those of the first (eight lanes of a flood under load) moves the backlog's clock past
            // them, and the fits of its first two minutes find too few readings.
            for message in messages { try await publisher.publish(message) }
            await publisher.stop()

            aggregator = try h.startAggregator(["--self-calibrate"])
            do {
                try await eventually(20, "the fitted offsets stored") {
                    (try? h.rows("SELECT count(*) FROM presence.node_calibration")) == ["4"]
                }
            } catch {
                let stats = bus.messages.last { $0.topic == h.topics.aggregatorStats }.map(\.text) ?? "none"
                Issue.record("\(error); the last stats: \(stats)")
                throw error
            }
            #expect(aggregator.stderr.contains("node offsets fitted from node beacons"))
            #expect(await aggregator.stop() == 0)
            let rows = try h.rows("SELECT node_key, offset_db, links, (EXTRACT(EPOCH FROM fitted_at) * 1000)::bigint FROM presence.node_calibration ORDER BY 1")
            var stored: [String: Double] = [:]
            for row in rows {
                let fields = row.split(separator: "|").map(String.init)
                guard fields.count == 4, let offset = Double(fields[1]), let links = Int(fields[2]), let fittedAt = Int64(fields[3]) else { continue }
                stored[fields[0]] = offset
                #expect(links == 12 && fittedAt > resumed + 60_000 && fittedAt <= resumed + 180_000, "\(row)")
            }
            let gains = Dictionary(uniqueKeysWithValues: scenario.nodes.map { ($0.key, simulator.gain(of: $0.key)) })
            let mean = gains.values.reduce(0, +) / Double(gains.count)
            for (node, gain) in gains {
                #expect(abs((stored[node] ?? .infinity) + gain - mean) < 1.5, "\(node): stored \(stored[node] ?? .nan), true \(mean - gain)")
            }

            // Restarted without any node beacon, it applies the stored offsets from the start.
            let before = bus.messages.count
            aggregator = try h.startAggregator(["--self-calibrate"])
            try await bus.wait(15, for: "stats with the stored offsets and no reading") { messages in
                guard messages.count > before, let calibration = Self.calibration(in: messages[before...], h) else { return false }
                return calibration.readings == 0 && calibration.offsets.count == 4
                    && calibration.offsets.allSatisfy { abs($0.value - (stored[$0.key] ?? .infinity)) < 0.006 }
            }
            #expect(await aggregator.stop() == 0, "aggregator log: \(aggregator.stderr.suffix(2000))")
            let nodes = try h.ctlOK("nodes", "--json")
            #expect(nodes.split(separator: "\n").allSatisfy { $0.contains(#""source":"fitted""#) && $0.contains(#""links":12"#) }, "\(nodes)")
            await bus.stop()
        }
    }
}
