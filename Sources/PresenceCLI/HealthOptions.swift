import ArgumentParser
import PresenceCore

/// The aggregator's fleet health thresholds (`{prefix}/v1/health`, `presencectl health`).
public struct HealthOptions: ParsableArguments {
    @Option(help: "A beacon or tag whose last Eddystone TLM battery reading is below this is low (e.g. 2500mV, 3.3V for 3.6 V lithium cells).")
    public var lowBattery = "2500mV"

    @Option(help: "A beacon or tag not heard for longer than this is silent (tags only once heard since the start).")
    public var silentAfter = "10m"

    @Option(help: "A fixed node from which nothing (batch, stats, status) came for longer than this is down.")
    public var nodeDownAfter = "1m"

    @Option(help: "A node whose clock is off by more than this is skewed.")
    public var maxSkew = "2s"

    @Option(help: "Publish the health report at least this often (changes go out within one --stats-interval).")
    public var healthInterval = "1m"

    public init() {}

    /// The thresholds these flags describe; a bad value names the flag.
    public func configuration() throws -> FleetHealth.Configuration {
        var configuration = FleetHealth.Configuration()
        configuration.lowBattery = try VoltageText.millivolts(lowBattery, what: "--low-battery")
        configuration.silentAfter = try Self.positive(silentAfter, what: "--silent-after")
        configuration.nodeDownAfter = try Self.positive(nodeDownAfter, what: "--node-down-after")
        configuration.maxSkew = try DurationText.milliseconds(maxSkew, what: "--max-skew")
        configuration.interval = try Self.positive(healthInterval, what: "--health-interval")
        return configuration
    }

    private static func positive(_ text: String, what: String) throws -> Int64 {
        let milliseconds = try DurationText.milliseconds(text, what: what)
        guard milliseconds >= 1_000 else {
            throw ValueError("\(what) '\(text)' is not valid: expected a duration of at least 1s, such as 10m")
        }
        return milliseconds
    }
}
