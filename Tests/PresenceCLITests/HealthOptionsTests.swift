import ArgumentParser
import PresenceCLI
import PresenceCore
import Testing

/// The aggregator's fleet health flags reach its configuration, and a bad value is refused in one
/// line that names the flag and the value.
@Suite struct HealthOptionsTests {
    @Test func everyFlagReachesTheConfigurationAndTheDefaultsAreTheCores() throws {
        let configuration = try HealthOptions.parse([
            "--low-battery", "3.3V", "--silent-after", "30m", "--node-down-after", "90s", "--max-skew", "500ms", "--health-interval", "5m",
        ]).configuration()
        #expect(configuration.lowBattery == 3_300 && configuration.silentAfter == 1_800_000 && configuration.nodeDownAfter == 90_000)
        #expect(configuration.maxSkew == 500 && configuration.interval == 300_000)
        #expect(try HealthOptions.parse(["--low-battery", "2450mV"]).configuration().lowBattery == 2_450)
        #expect(try HealthOptions.parse(["--low-battery", "2600"]).configuration().lowBattery == 2_600)
        #expect(try HealthOptions.parse([]).configuration() == FleetHealth.Configuration())
    }

    @Test(arguments: [
        (["--low-battery", "low"], ["--low-battery", "'low'", "2500mV"]),
        (["--low-battery", "70V"], ["--low-battery", "'70V'"]),
        (["--low-battery", "0mV"], ["--low-battery", "'0mV'"]),
        (["--silent-after", "0s"], ["--silent-after", "'0s'", "at least 1s"]),
        (["--node-down-after", "soon"], ["--node-down-after", "'soon'"]),
        (["--max-skew", "2 s"], ["--max-skew", "'2 s'"]),
        (["--health-interval", "500ms"], ["--health-interval", "'500ms'"]),
    ])
    func aBadValueIsRefusedInOneLineNamingTheFlagAndTheValue(_ arguments: [String], _ named: [String]) {
        let error = #expect(throws: (any Error).self) { try HealthOptions.parse(arguments).configuration() }
        let message = error.map { HealthOptions.message(for: $0) } ?? ""
        #expect(!message.contains("\n"), "\(message)")
        for fragment in named {
            #expect(message.contains(fragment), "\(message)")
        }
    }
}
