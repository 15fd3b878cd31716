import ArgumentParser
import Logging
import PresenceAggregator
import PresenceCLI
import PresenceDatabaseCLI
import PresenceCore
import PresenceMQTT
import PresencePostgres
import ServiceLifecycle
import UnixSignals

/// `presence-aggregator`: decides who is at which beacon from the sightings on the broker, keeps
/// sessions in PostgreSQL and publishes events and live state.
@main
struct PresenceAggregatorCommand: AsyncParsableCommand {
    static func main() async {
        await CommandRunner.main(Self.self)
    }

    static let configuration = CommandConfiguration(
        commandName: "presence-aggregator",
        abstract: "Turn BLE sightings into enter/exit events, sessions and live state.")

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var tuning: EngineOptions

    @Option(help: "MQTT client id, one running aggregator per id (default: presence-aggregator-PREFIX).")
    var clientID: String?

    @Flag(help: "Start a new broker session, giving up the sightings the broker kept while the aggregator was down.")
    var cleanSession = false

    @Option(help: "Greet a user (or bid goodbye) at a beacon at most once per this long.")
    var notifyCooldown = "1h"

    @Option(help: "How often counters are logged and published on {prefix}/v1/aggregator/stats (e.g. 10s).")
    var statsInterval = "10s"

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    mutating func run() async throws {
        LogOptions.bootstrap(level: try LogOptions.level(logLevel))
        let logger = Logger(label: "presence-aggregator")
        var configuration = AggregatorConfiguration(
            broker: try connection.brokerURL(), database: try connection.databaseConfiguration(), topics: try connection.topics())
        configuration.core.pipeline = try tuning.pipelineConfiguration()
        configuration.clientID = clientID
        configuration.cleanSession = cleanSession
        configuration.core.notificationCooldown = try DurationText.milliseconds(notifyCooldown, what: "--notify-cooldown")
        configuration.core.statsInterval = try DurationText.milliseconds(statsInterval, what: "--stats-interval")
        let services = try AggregatorServices.make(configuration, logger: logger)
        let group = ServiceGroup(configuration: .init(
            services: services.map { .init(service: $0, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup) },
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
