import ArgumentParser
import Foundation
import Logging
import PresenceCLI
import PresenceCore
import PresenceDatabaseCLI
import PresenceMQTT
import PresenceStore
import ServiceLifecycle
import Synchronization
import UnixSignals

struct DiscoverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discover",
        abstract: "List identities heard recently that are not registered, with the nodes that heard them, to register a venue's tags.",
        discussion: """
            Listens to the sightings for --for (30s), leaves out every identity the registry knows (devices, beacons and their \
            regions, registered nodes' own beacons), and prints the rest, strongest first: the nodes that heard each (best and \
            median RSSI), how often, when last, and the tx power and TLM battery when frames state them. Hold a tag near a node \
            and it is the top line. Needs a broker login that may read sightings (presence-aggregator's, as for `record`).

            Identities are shown hashed (their kind and 12 hex digits, under a key made for this run only): what is heard \
            includes visitors' phones and tags that nobody registered, and their identities should not end up in terminals, \
            logs or screenshots. The hash still tells devices apart within one run. --show-identities prints them in clear, \
            to copy into `device add` or `beacon add --id`. Nothing is stored.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Option(name: .customLong("for"), help: "How long to listen, such as 30s or 2m.") var duration = "30s"
    @Option(help: "Only identities heard at least this many times.") var minSightings = 1
    @Flag(help: "Print identities in clear instead of hashed.") var showIdentities = false
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let limit = try DurationText.milliseconds(duration, what: "--for")
        guard limit > 0 else { throw ValueError("--for '\(duration)' is not valid: expected a duration above zero, such as 30s") }
        guard minSightings >= 1 else { throw ValueError("--min-sightings \(minSightings) is not valid: expected 1 or more") }
        let topics = try connection.topics()
        let broker = try connection.mqttBroker()
        let registry = try await withDatabase(connection) { try await $0.loadRegistry() }
        let tally = Mutex(DiscoveryTally(registry: registry))
        let logger = Logger(label: "presencectl")
        var mqtt = MQTTConfiguration(broker: broker, clientID: "presencectl-discover-\(getpid())")
        let filter = "\(topics.prefix)/v1/sightings/#"
        mqtt.subscriptions = [MQTTSubscription(filter, qos: 1)]
        let client = try MQTTClient(configuration: mqtt, logger: logger)
        let listener = SubscriptionService(client: client, limit: limit, listening: { StandardStreams.error("listening for sightings on \(filter)") }) {
            message in
            guard let (node, sightings) = SightingsMessage.read(message) else { return }
            tally.withLock { tally in
                for sighting in sightings { tally.add(sighting, node: node) }
            }
        }
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: listener, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        let (rows, registered) = tally.withLock { ($0.rows(minimumSightings: minSightings), $0.registeredSightings) }
        let key = showIdentities ? nil : SipHash24.Key(k0: UInt64.random(in: .min ... .max), k1: UInt64.random(in: .min ... .max))
        let shown: (String) -> String = { identity in key.map { DiscoveryTally.pseudonym(identity, key: $0) } ?? identity }
        switch output.format {
        case .json:
            for row in rows { print(DiscoveryOutput.json(row, identity: shown(row.identity))) }
        case .csv:
            print(try DiscoveryOutput.fields(rows, identity: shown).csv(), terminator: "")
        case .table:
            print(DiscoveryOutput.table(rows, identity: shown))
        }
        StandardStreams.error("\(rows.count) unregistered identit\(rows.count == 1 ? "y" : "ies"); \(registered) sighting\(registered == 1 ? "" : "s") of registered ones left out")
    }
}

/// A sightings message read for `discover`: the node from the topic (`…/v1/sightings/{node}`, or
/// `…/{node}/{shard}`), the batch's valid sightings, with the TLM battery of those that carry one.
enum SightingsMessage {
    static func read(_ message: MQTTMessage) -> (node: String, sightings: [Sighting])? {
        guard case .sightings(let node) = Topics.nodeMessage(in: message.topic),
              case .success(let decoded) = SightingBatchDecoder.decode(message.payload, topicNode: node) else { return nil }
        let batteries = batteries(in: message.payload)
        let sightings = decoded.batch.sightings.map { sighting in
            var sighting = sighting
            if let battery = batteries[sighting.id] { sighting.telemetry = Telemetry(batteryMillivolts: battery) }
            return sighting
        }
        return (node, sightings)
    }

    /// The `tlm.batt` of each sighting that has one, by identity (the decoder keeps no telemetry).
    private static func batteries(in payload: [UInt8]) -> [String: Int] {
        guard let batch = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
              let sightings = batch["sightings"] as? [[String: Any]] else { return [:] }
        var batteries: [String: Int] = [:]
        for sighting in sightings {
            if let id = sighting["id"] as? String, let battery = ((sighting["tlm"] as? [String: Any])?["batt"] as? NSNumber)?.intValue {
                batteries[id] = battery
            }
        }
        return batteries
    }
}

/// How `discover` prints its rows.
enum DiscoveryOutput {
    static func table(_ rows: [DiscoveryTally.Row], identity: (String) -> String) -> String {
        TableOutput.render(header: ["IDENTITY", "BEST", "MEDIAN", "SEEN", "LAST HEARD", "TX", "BATTERY", "NODES (BEST/MEDIAN dBm, SEEN)"], rows: rows.map { row in
            [identity(row.identity), "\(row.bestRSSI)", number(row.medianRSSI), "\(row.sightings)", Timestamps.iso8601(row.lastHeard),
             row.tx.map { "\($0)" } ?? "-", row.batteryMillivolts.map { "\($0) mV" } ?? "-",
             row.nodes.map { "\($0.node) \($0.bestRSSI)/\(number($0.medianRSSI)) ×\($0.sightings)" }.joined(separator: ", ")]
        })
    }

    /// For CSV, one record per identity and node that heard it.
    static func fields(_ rows: [DiscoveryTally.Row], identity: (String) -> String) -> FieldRows {
        var fields = FieldRows(["id", "best_rssi", "median_rssi", "sightings", "last_heard", "tx", "battery_mv",
                                "node", "node_best_rssi", "node_median_rssi", "node_sightings"])
        for row in rows {
            for hearing in row.nodes {
                fields.append([.text(identity(row.identity)), .integer(Int64(row.bestRSSI)), .number(row.medianRSSI), .integer(Int64(row.sightings)),
                               .time(row.lastHeard), row.tx.map { .integer(Int64($0)) }, row.batteryMillivolts.map { .integer(Int64($0)) },
                               .text(hearing.node), .integer(Int64(hearing.bestRSSI)), .number(hearing.medianRSSI), .integer(Int64(hearing.sightings))])
            }
        }
        return fields
    }

    static func json(_ row: DiscoveryTally.Row, identity: String) -> String {
        var w = JSONWriter()
        w.object { w in
            w.member("id", identity)
            w.member("best_rssi", row.bestRSSI)
            w.member("median_rssi", number: row.medianRSSI, decimals: 1)
            w.member("sightings", row.sightings)
            w.member("last_heard", row.lastHeard)
            w.member("tx", row.tx)
            w.member("battery_mv", row.batteryMillivolts)
            w.key("nodes")
            w.array { w in
                for hearing in row.nodes {
                    w.object { w in
                        w.member("node", hearing.node)
                        w.member("best_rssi", hearing.bestRSSI)
                        w.member("median_rssi", number: hearing.medianRSSI, decimals: 1)
                        w.member("sightings", hearing.sightings)
                    }
                }
            }
        }
        return String(decoding: w.bytes, as: UTF8.self)
    }

    /// `-61`, `-61.5`.
    private static func number(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value))" : "\((value * 10).rounded() / 10)"
    }
}
