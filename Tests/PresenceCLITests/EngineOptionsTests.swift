import ArgumentParser
import PresenceCLI
import PresenceCore
import Testing

/// The tuning flags that `presence-aggregator` and `presencectl replay` share reach the pipeline's
/// configuration, and a bad value is refused in one line that names the flag and the value.
@Suite struct EngineOptionsTests {
    @Test func everyFlagReachesTheConfiguration() throws {
        let configuration = try EngineOptions.parse([
            "--node-down-hold", "30s", "--clock-skew", "500ms", "--smoothing", "median", "--choose", "position",
            "--absence-timeout", "20s", "--stale-after", "8s", "--switch-margin", "6", "--switch-dwell", "2500ms", "--enter-dwell", "2s",
            "--enter-sightings", "3", "--path-loss-exponent", "2.5", "--smoothing-time", "800ms", "--lateness", "1500ms",
        ]).pipelineConfiguration()
        let engine = configuration.engine
        #expect(engine.nodeDownHold == 30_000)
        #expect(configuration.skewThreshold == 500)
        #expect(engine.smoothing.method == .median)
        #expect(engine.choice == .position)
        #expect(engine.absenceTimeout == 20_000 && engine.staleAfter == 8_000)
        #expect(engine.switchMargin == 6 && engine.switchDwell == 2_500)
        #expect(engine.enterDwell == 2_000 && engine.enterSightings == 3)
        #expect(engine.pathLossExponent == 2.5 && engine.smoothing.timeConstant == 800)
        #expect(configuration.lateness == 1_500)
    }

    @Test func withoutFlagsTheConfigurationIsThePipelinesDefault() throws {
        #expect(try EngineOptions.parse([]).pipelineConfiguration() == PresencePipeline.Configuration())
    }

    /// Each bad value with what the message must say: the flag, and the value as typed (quoted), or
    /// as read when it parsed but is out of range.
    @Test(arguments: [
        (["--node-down-hold", "soon"], ["--node-down-hold", "'soon'"]),
        (["--clock-skew", "2 s"], ["--clock-skew", "'2 s'"]),
        (["--smoothing", "fancy"], ["--smoothing", "'fancy'"]),
        (["--choose", "nearest"], ["--choose", "'nearest'"]),
        (["--enter-sightings", "many"], ["--enter-sightings", "'many'"]),
        (["--enter-sightings", "0"], ["enter-sightings 0 "]),
    ])
    func aBadValueIsRefusedInOneLineNamingTheFlagAndTheValue(_ arguments: [String], _ named: [String]) {
        let error = #expect(throws: (any Error).self) { try EngineOptions.parse(arguments).pipelineConfiguration() }
        // What CommandRunner prints (it keeps the first line only).
        let message = error.map { EngineOptions.message(for: $0) } ?? ""
        #expect(!message.contains("\n"), "\(message)")
        for fragment in named {
            #expect(message.contains(fragment), "\(message)")
        }
    }
}
