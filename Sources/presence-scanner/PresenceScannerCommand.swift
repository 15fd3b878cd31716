import ArgumentParser
import Foundation
import Logging
import PresenceCLI
import PresenceCore
import PresenceScanner
import ServiceLifecycle
import UnixSignals

/// `presence-scanner`: a scanner node that publishes what it hears as SightingBatches.
@main
struct PresenceScannerCommand: AsyncParsableCommand {
    static func main() async {
        await CommandRunner.main(Self.self)
    }

    static let configuration = CommandConfiguration(
        commandName: "presence-scanner",
        abstract: "Publish BLE sightings to MQTT, from a simulated venue (a radio source comes later).")

    @Option(name: .customLong("node"), help: "Node key; repeat for several. With --simulate, default: every node of the scenario.")
    var nodes: [String] = []

    @OptionGroup var connection: ConnectionOptions

    @Option(help: "Simulate the venue described in this JSON file.")
    var simulate: String?

    @Option(help: "A batch closes when its oldest sighting has waited this long.")
    var batchMs = 500

    @Option(help: "A batch closes when it holds this many sightings (at most 10000).")
    var batchSize = 1_000

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    mutating func run() async throws {
        LogOptions.bootstrap(level: try LogOptions.level(logLevel))
        let logger = Logger(label: "presence-scanner")
        for node in nodes { _ = try Slug(node, what: "node") }
        guard (1 ... 60_000).contains(batchMs) else { throw ValueError("--batch-ms \(batchMs) is not valid: expected 1 to 60000") }
        guard (1 ... SightingLimits.maximumSightings).contains(batchSize) else {
            throw ValueError("--batch-size \(batchSize) is not valid: expected 1 to \(SightingLimits.maximumSightings)")
        }
        var configuration = ScannerConfiguration(broker: try connection.brokerURL(), topics: try connection.topics())
        configuration.batchInterval = Int64(batchMs)
        configuration.batchSize = batchSize
        guard let simulate else {
            throw ValidationError("choose a source: --simulate VENUE-FILE")
        }
        let scenario = try ScenarioFile.load(simulate)
        let service = try SimulatedScanner(configuration: configuration, scenario: scenario, nodes: Set(nodes), logger: logger)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// Reads a scenario file, with errors that name the file and what is wrong in it.
enum ScenarioFile {
    static func load(_ path: String) throws -> Scenario {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValueError("scenario file '\(path)' cannot be read")
        }
        do {
            let scenario = try JSONDecoder().decode(Scenario.self, from: data)
            try scenario.validate()
            return scenario
        } catch let error as ValueError {
            throw ValueError("scenario file '\(path)': \(error.message)")
        } catch let DecodingError.keyNotFound(key, context) {
            throw ValueError("scenario file '\(path)': '\(key.stringValue)' is missing at \(context.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.dataCorrupted(context), let DecodingError.valueNotFound(_, context) {
            throw ValueError("scenario file '\(path)': \(context.debugDescription) at \(context.codingPath.map(\.stringValue).joined(separator: "."))")
        }
    }
}
