import Foundation
@testable import PresenceAggregator
import PresenceCore
import PresenceMQTT
import Testing

/// The aggregator's stats payload, with the self-calibration part, against its JSON Schema.
@Suite struct AggregatorStatsSchemaTests {
    static func payload(calibration: SelfCalibration.Summary?) -> String {
        var core = AggregatorCore.Statistics(counters: PipelineCounters(), strangers: StrangerNodes(), late: 0, decisionLag: 1_000,
                                             catchingUp: false, calibration: calibration)
        core.ownedShards = 4
        let statistics = AggregatorStatistics(aggregator: "presence-aggregator-presence", core: core, inbox: LoopInbox.Counters(),
                                              journal: Journal.Status(end: 0, durable: 0, retainedBytes: 0, published: 0, applied: 0), inFlight: 0,
                                              deadLetters: 0, decisionToPublish: LatencySummary(count: 0, p50: 0, p99: 0, max: 0))
        return String(decoding: statistics.encoded(), as: UTF8.self)
    }

    /// Runs the schema validator over `payloads` as messages on `topic` (stats by default); its exit status and output.
    static func validate(_ payloads: [String], topic: String = "p/v1/aggregator/stats") async throws -> (status: Int32, output: String) {
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("stats-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: capture) }
        let lines = try payloads.map { payload in
            String(decoding: try JSONSerialization.data(withJSONObject: ["topic": topic, "payload": payload]), as: UTF8.self)
        }
        try (lines.joined(separator: "\n") + "\n").write(to: capture, atomically: true, encoding: .utf8)
        let script = PackagePaths.root.appendingPathComponent("schemas/validate-payloads.py").path
        let validation = try ChildProcess.spawn("/usr/bin/env", ["python3", script, capture.path])
        let status = await validation.wait()
        return (status, validation.stdout)
    }

    @Test func theCalibrationPartMatchesTheSchemaAndTheSchemaChecksIt() async throws {
        let fit = NodeLinkCalibration.Fit(offsets: ["node-a": 1.25, "node-b": -1.25], exponent: 2.13, links: 2, residual: 0.8, groups: [
            NodeLinkCalibration.Group(area: "lab", nodes: ["node-a", "node-b"], exponent: 2.13, links: 2, residual: 0.8),
        ])
        let fitted = Self.payload(calibration: SelfCalibration.Summary(readings: 1_200, fittedAt: 1_763_774_760_000, fit: fit,
                                                                       applied: ["node-a": 1.25, "node-b": -1.25]))
        let waiting = Self.payload(calibration: SelfCalibration.Summary(readings: 3, fittedAt: nil, fit: nil, applied: [:]))
        let off = Self.payload(calibration: nil)
        #expect(fitted.contains(#""calibration":{"readings":1200,"fitted_at":1763774760000,"links":2,"residual_db":0.8,"path_loss_exponent":2.13,"groups":[{"area":"lab","nodes":2,"links":2,"residual_db":0.8,"path_loss_exponent":2.13}],"offsets_db":{"node-a":1.25,"node-b":-1.25}}"#))
        #expect(!off.contains("calibration"))
        let valid = try await Self.validate([fitted, waiting, off])
        #expect(valid.status == 0, "\(valid.output)")
        #expect(valid.output.contains("aggregator-stats=3"), "\(valid.output)")

        let broken = fitted.replacingOccurrences(of: #""offsets_db":{"node-a":1.25"#, with: #""offsets_db":{"node-a":"hot""#)
        let refused = try await Self.validate([broken])
        #expect(refused.status == 1, "an offset that is not a number is refused: \(refused.output)")
        let groupless = fitted.replacingOccurrences(of: #""area":"lab","#, with: "")
        let refusedGroup = try await Self.validate([groupless])
        #expect(refusedGroup.status == 1, "a group without its area is refused: \(refusedGroup.output)")
    }
}
