import ArgumentParser
import Logging
import PresenceCLI

/// `presencectl`: set up the database, manage the registry, look at presence and history,
/// record sightings, replay them through the engine and calibrate nodes from a recorded walk.
@main
struct Presencectl: AsyncParsableCommand {
    static func main() async {
        LogOptions.bootstrap(level: .warning)
        await CommandRunner.main(Self.self)
    }

    static let configuration = CommandConfiguration(
        commandName: "presencectl",
        abstract: "Manage and query the BLE presence pipeline.",
        subcommands: [
            Migrate.self, VenueCommand.self, BeaconCommand.self, NodeCommand.self, UserCommand.self, DeviceCommand.self,
            NodesCommand.self, PresenceCommand.self, SessionsCommand.self, VisitsCommand.self, RecordCommand.self, ReplayCommand.self,
            CalibrateCommand.self, PurgeCommand.self, TailCommand.self, ListCommand.self, ExportCommand.self, ImportCommand.self,
            DiscoverCommand.self, ReportCommand.self, HealthCommand.self,
        ])
}
