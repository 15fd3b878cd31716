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
        groupedSubcommands: [
            CommandGroup(name: "Set up", subcommands: [Migrate.self, ImportCommand.self, ExportCommand.self, ShardsCommand.self]),
            CommandGroup(name: "Registry", subcommands: [
                VenueCommand.self, ZoneCommand.self, BeaconCommand.self, NodeCommand.self, UserCommand.self, DeviceCommand.self, ListCommand.self, DiscoverCommand.self,
            ]),
            CommandGroup(name: "Who is where, and was", subcommands: [
                PresenceCommand.self, SessionsCommand.self, VisitsCommand.self, ReportCommand.self, TailCommand.self,
            ]),
            CommandGroup(name: "Nodes", subcommands: [NodesCommand.self, HealthCommand.self, CalibrateCommand.self]),
            CommandGroup(name: "Recordings", subcommands: [RecordCommand.self, ReplayCommand.self]),
            CommandGroup(name: "History", subcommands: [PurgeCommand.self]),
        ])
}
