import ArgumentParser
import Foundation
import Logging
import PresenceBLE
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
        abstract: "Publish BLE sightings to MQTT: from an adapter, a btsnoop capture or a simulated venue.")

    @Option(name: .customLong("node"), help: "Node key (with --simulate, repeat for several; default: every node of the scenario).")
    var nodes: [String] = []

    @OptionGroup var connection: BrokerOptions

    @Option(help: "Scan this adapter (hci0) through BlueZ's HCI.")
    var hci: String?

    @Option(help: "Replay this btsnoop capture (datalink 1001, 1002 or 2001) instead of scanning.")
    var btsnoop: String?

    @Option(help: "Simulate the venue described in this JSON file.")
    var simulate: String?

    @Flag(help: "Active scanning (asks for scan responses); passive by default.")
    var active = false

    @Option(help: "Scan interval, ms.")
    var interval = 100.0

    @Option(help: "Scan window, ms (at most the interval).")
    var window = 100.0

    @Flag(help: "Send no scan command: read the reports of the scan bluetoothd runs, through the HCI monitor channel.")
    var monitor = false

    @Flag(help: "Also transmit this node's own iBeacon through the --hci adapter (raw channel only), so that other nodes hear it for self-calibration.")
    var advertise = false

    @Option(parsing: .unconditional, help: "With --advertise: the measured power at 1 m the beacon states, dBm (-127 to 20, not 0; default -59).")
    var advertiseTx: Int?

    @Option(help: "With --advertise: how often the beacon is sent, 100ms to 10.24s (default 1s).")
    var advertiseInterval: String?

    @Option(help: "Replay speed: a factor (2 = twice as fast) or 'max'.")
    var speed = "1"

    @Flag(help: "Keep the capture's own timestamps instead of shifting the first record to now.")
    var keepTime = false

    @Option(help: "Which advertisers without a beacon frame are published as mac: sightings: stable (public and static random addresses), all, or none.")
    var addresses = "stable"

    @Flag(help: "Replace addresses with keyed pseudonyms (secret from --hash-secret-file or $PRESENCE_HASH_SECRET).")
    var hashAddresses = false

    @Option(help: "A file holding the secret for --hash-addresses.")
    var hashSecretFile: String?

    @Option(help: "Publish only identities starting with this prefix (repeatable), such as ibeacon:<uuid>.")
    var allow: [String] = []

    @Option(help: "Never publish identities starting with this prefix (repeatable).")
    var deny: [String] = []

    @Option(parsing: .unconditional, help: "Drop reports weaker than this, dBm.")
    var minRssi: Int?

    @Option(help: "A batch closes when its oldest sighting has waited this long, ms.")
    var batchMs = 500

    @Option(help: "A batch closes when it holds this many sightings (at most 10000).")
    var batchSize = 1_000

    @Option(help: "Keep unacknowledged batches here too, so that a restart sends them.")
    var spoolDir: String?

    @Option(help: "How many batches to keep while the broker is away; beyond, the oldest are dropped and counted.")
    var spoolCapacity = 10_000

    @Option(help: "How often the node publishes its stats (also its heartbeat).")
    var statsInterval = "5s"

    @Flag(help: "The node is worn by a person (registered as a device node:KEY): with several shards, all it hears goes on one shard.")
    var carried = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    mutating func run() async throws {
        LogOptions.bootstrap(level: try LogOptions.level(logLevel))
        let logger = Logger(label: "presence-scanner")
        let sources = [hci, btsnoop, simulate].compactMap { $0 }
        guard sources.count == 1 else {
            throw ValidationError("choose one source: --hci ADAPTER, --btsnoop FILE or --simulate VENUE-FILE")
        }
        for node in nodes { _ = try Slug(node, what: "node") }
        let beacon = try advertisedBeacon()
        let configuration = try scannerConfiguration()
        let service: any Service
        if let simulate {
            let source = try SimulatedReports(scenario: try ScenarioFile.load(simulate), nodes: Set(nodes), logger: logger)
            service = ScannerNode(source: source, configuration: configuration, logger: logger)
        } else {
            guard nodes.count == 1, let node = nodes.first else {
                throw ValidationError("--hci and --btsnoop publish as one node: give exactly one --node KEY")
            }
            let options = try decoderOptions()
            if let hci {
                var scan = HCIScanConfiguration(adapter: hci)
                scan.mode = monitor ? .monitor : .scan
                scan.active = active
                scan.interval = interval
                scan.window = window
                let identity = NodeBeacon.identity(of: node)
                if let beacon {
                    scan.advertising = HCIAdvertisingConfiguration(data: try IBeacon(identity: identity, measuredPower: beacon.tx).advertisingData,
                                                                   interval: beacon.interval)
                }
                try scan.validate()
                let scanner = try HCIScanner(configuration: scan, logger: logger)
                if let beacon {
                    logger.notice("advertising node beacon", metadata: ["node": "\(node)", "identity": "\(identity)", "tx": "\(beacon.tx)"])
                }
                let source = AdapterReports(node: node, scanner: scanner, options: options)
                service = ScannerNode(source: source, configuration: configuration, logger: logger)
            } else if let btsnoop {
                let speed = try replaySpeed()
                guard let data = FileManager.default.contents(atPath: btsnoop) else {
                    throw ValueError("--btsnoop '\(btsnoop)' cannot be read")
                }
                let source = try CaptureReports(node: node, capture: Array(data), name: URL(fileURLWithPath: btsnoop).lastPathComponent,
                                                speed: speed, keepTime: keepTime, options: options, logger: logger)
                service = ScannerNode(source: source, configuration: configuration, logger: logger)
            } else {
                throw ValidationError("choose one source: --hci ADAPTER, --btsnoop FILE or --simulate VENUE-FILE")
            }
        }
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }

    private func scannerConfiguration() throws -> ScannerConfiguration {
        guard (1 ... 60_000).contains(batchMs) else { throw ValueError("--batch-ms \(batchMs) is not valid: expected 1 to 60000") }
        guard (1 ... SightingLimits.maximumSightings).contains(batchSize) else {
            throw ValueError("--batch-size \(batchSize) is not valid: expected 1 to \(SightingLimits.maximumSightings)")
        }
        guard spoolCapacity >= 1 else { throw ValueError("--spool-capacity \(spoolCapacity) is not valid: expected 1 or more") }
        var configuration = ScannerConfiguration(broker: try connection.mqttBroker(), topics: try connection.topics())
        configuration.batchInterval = Int64(batchMs)
        configuration.batchSize = batchSize
        configuration.spoolCapacity = spoolCapacity
        configuration.statsInterval = try DurationText.milliseconds(statsInterval, what: "--stats-interval")
        configuration.carried = carried
        if let spoolDir {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: spoolDir, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValueError("--spool-dir '\(spoolDir)' is not a folder")
            }
            configuration.spoolDirectory = spoolDir
        }
        return configuration
    }

    private func decoderOptions() throws -> AdvertisementDecoder.Options {
        var options = AdvertisementDecoder.Options()
        switch addresses {
        case "stable": options.addresses = .stableOnly
        case "all": options.addresses = .all
        case "none": options.addresses = .none
        default: throw ValueError("--addresses '\(addresses)' is not valid: expected stable, all or none")
        }
        if hashAddresses {
            let secret: String
            if let hashSecretFile {
                guard let text = try? String(contentsOfFile: hashSecretFile, encoding: .utf8) else {
                    throw ValueError("--hash-secret-file '\(hashSecretFile)' cannot be read")
                }
                secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
            } else {
                secret = ProcessInfo.processInfo.environment["PRESENCE_HASH_SECRET"] ?? ""
            }
            guard secret.count >= 16 else {
                throw ValueError("--hash-addresses needs a secret of at least 16 characters, from --hash-secret-file or PRESENCE_HASH_SECRET")
            }
            options.hashing = AddressHasher(secret: secret)
        }
        for prefix in allow + deny where prefix.isEmpty {
            throw ValueError("--allow/--deny prefix '\(prefix)' is not valid: expected the start of an identity, such as ibeacon:<uuid>")
        }
        options.allow = allow
        options.deny = deny
        if let minRssi {
            guard SightingLimits.rssiRange.contains(minRssi) else {
                throw ValueError("--min-rssi \(minRssi) is not valid: expected dBm from -127 to 20")
            }
            options.minimumRSSI = minRssi
        }
        options.includeScanResponses = active
        return options
    }

    /// What `--advertise` has the node transmit (its power at 1 m, dBm, and interval, ms), nil
    /// without it. Checked before any source opens: only a node scanning an adapter through the raw
    /// channel can transmit, so a capture, a simulation or --monitor with --advertise is refused
    /// rather than calibrating nothing in silence.
    private func advertisedBeacon() throws -> (tx: Int, interval: Double)? {
        guard advertise else {
            if advertiseTx != nil || advertiseInterval != nil {
                throw ValidationError("--advertise-tx and --advertise-interval need --advertise")
            }
            return nil
        }
        guard hci != nil else {
            throw ValidationError("--advertise needs --hci ADAPTER: a capture or a simulation has no radio to transmit with")
        }
        guard !monitor else {
            throw ValidationError("--advertise cannot be used with --monitor: the monitor channel only reads; advertising sends commands on the raw channel")
        }
        let tx = advertiseTx ?? -59
        guard IBeacon.isTransmittable(measuredPower: tx) else {
            throw ValueError("--advertise-tx \(tx) is not valid: expected dBm from -127 to 20, other than 0 (which means not calibrated)")
        }
        let interval = Double(try DurationText.milliseconds(advertiseInterval ?? "1s", what: "--advertise-interval"))
        guard HCIAdvertisingConfiguration.intervalRange.contains(interval) else {
            throw ValueError("--advertise-interval \(advertiseInterval ?? "") is not valid: expected 100ms to 10.24s")
        }
        return (tx, interval)
    }

    private func replaySpeed() throws -> CapturePacing.Speed {
        if speed == "max" { return .asFastAsPossible }
        guard let factor = Double(speed), factor > 0, factor.isFinite else {
            throw ValueError("--speed '\(speed)' is not valid: expected a factor above 0 (such as 1, 2, 10) or 'max'")
        }
        return .factor(factor)
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
