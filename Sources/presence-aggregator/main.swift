import ArgumentParser
import Logging
import PresenceAggregator
import PresenceCLI
import PresenceDatabaseCLI
import PresenceHTTP
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
    @OptionGroup var keep: RetentionOptions
    @OptionGroup var homeAssistant: HomeAssistantOptions
    @OptionGroup var health: HealthOptions

    @Option(help: "MQTT client id, one running aggregator per id (default: presence-aggregator-PREFIX).")
    var clientID: String?

    @Flag(help: "Start a new broker session, giving up the sightings the broker kept while the aggregator was down.")
    var cleanSession = false

    @Option(help: "While the connection that reads the nodes' batches is down, decisions wait this long at most for it and the nodes' backlog to come back, so that what nodes said meanwhile is decided in its own time; an exit due meanwhile is published up to this late (0: decisions do not wait).")
    var inboundDownHold = "30s"

    @Option(help: "Greet a user (or bid goodbye) at a beacon at most once per this long.")
    var notifyCooldown = "1h"

    @Option(help: "How often counters are logged and published on {prefix}/v1/aggregator/stats (e.g. 10s).")
    var statsInterval = "10s"

    @Option(help: "Republish a beacon's retained state at most once per this long: a change at once, later ones together (e.g. 1s, 0 for every change).")
    var beaconStateInterval = "1s"

    @Option(help: "Refresh how near a present user is to their beacon (rssi, distance, proximity) in their retained state at most once per this long, when it changed (e.g. 1s, 0 turns it off).")
    var rangingInterval = "1s"

    @Option(help: "Where the journal and the dead letters live (default: $STATE_DIRECTORY or ~/.local/state/presence, then the client id).")
    var stateDir: String?

    @Option(help: "Past this much held in the journal (a long database outage), progress is saved once a minute (e.g. 1GiB, 200MiB).")
    var journalMax = "1GiB"

    @Option(help: "Memory for journal records the publisher or the database writer has yet to pass; beyond it they are read back from the journal's files (e.g. 32MiB).")
    var journalCache = "32MiB"

    @Option(help: "How many published messages may await the broker's acknowledgement at once (1 to 65535).")
    var publishWindow = 1_000

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    @Flag(help: "Let log lines name users (for debugging); by default they carry counts only.")
    var logIdentities = false

    @Option(help: "Serve the live venue page, its JSON, /metrics, /healthz and /readyz on ADDR:PORT (e.g. 127.0.0.1:8080); off by default.")
    var http: String?

    @OptionGroup var foreign: ForeignOptions

    mutating func run() async throws {
        LogOptions.bootstrap(level: try LogOptions.level(logLevel))
        let logger = Logger(label: "presence-aggregator")
        var configuration = AggregatorConfiguration(
            broker: try connection.mqttBroker(), database: try connection.databaseConfiguration(), topics: try connection.topics())
        configuration.core.pipeline = try tuning.pipelineConfiguration()
        configuration.retention = try keep.retention()
        configuration.core.homeAssistant = try homeAssistant.configuration(pipeline: configuration.topics)
        configuration.core.health = try health.configuration()
        configuration.core.foreign = try foreign.topics()
        configuration.logIdentities = logIdentities
        configuration.clientID = clientID
        configuration.cleanSession = cleanSession
        configuration.core.inboundDownHold = try DurationText.milliseconds(inboundDownHold, what: "--inbound-down-hold")
        configuration.core.notificationCooldown = try DurationText.milliseconds(notifyCooldown, what: "--notify-cooldown")
        configuration.core.statsInterval = try DurationText.milliseconds(statsInterval, what: "--stats-interval")
        configuration.core.beaconStateInterval = try DurationText.milliseconds(beaconStateInterval, what: "--beacon-state-interval")
        configuration.core.rangingInterval = try DurationText.milliseconds(rangingInterval, what: "--ranging-interval")
        if let stateDir { configuration.stateDirectory = stateDir }
        configuration.journalBytes = try ByteCountText.bytes(journalMax, what: "--journal-max")
        configuration.journalCacheBytes = try ByteCountText.bytes(journalCache, what: "--journal-cache")
        guard (1 ... 65_535).contains(publishWindow) else {
            throw ValueError("--publish-window \(publishWindow) is not valid: expected 1 to 65535 messages")
        }
        configuration.publishWindow = publishWindow
        if let http {
            guard let address = ListenAddress(parsing: http) else {
                throw ValueError("--http '\(http)' is not valid: expected ADDR:PORT, such as 127.0.0.1:8080 or [::1]:8080")
            }
            configuration.http = address
        }
        let services = try AggregatorServices.make(configuration, logger: logger)
        let group = ServiceGroup(configuration: .init(
            services: services.map { .init(service: $0, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup) },
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
