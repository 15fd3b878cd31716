import ArgumentParser
import Foundation
import Logging
import PresenceCLI
import PresenceCore
import PresenceDatabaseCLI
import PresenceMQTT
import ServiceLifecycle
import UnixSignals

struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Print enter and exit events (of beacons, and of zones with --zones or --zone) as the aggregator publishes them, one readable line each.",
        discussion: "Needs a broker login that may read events (presence-reader). Stops after --for, or on SIGINT/SIGTERM.")

    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Only this user's events.") var user: String?
    @Option(help: "Only events at this beacon.") var beacon: String?
    @Flag(help: "Zones' events too, beside the beacons'.") var zones = false
    @Option(help: "Only this zone's events (no beacon's).") var zone: String?
    @Flag(help: "Print each event's JSON as published instead.") var json = false
    @Option(name: .customLong("for"), help: "Stop after this long, such as 10m.") var duration: String?

    func run() async throws {
        let limit = try duration.map { try DurationText.milliseconds($0, what: "--for") }
        let user = try user.map { try Slug($0, what: "user").value } ?? "+"
        let beacon = try beacon.map { try Slug($0, what: "beacon").value } ?? "+"
        let zone = try zone.map { try Slug($0, what: "zone").value }
        if zone != nil, beacon != "+" { throw ValueError("--beacon and --zone cannot be given together: a beacon's events or a zone's, not both") }
        let topics = try connection.topics()
        let logger = Logger(label: "presencectl")
        var mqtt = MQTTConfiguration(broker: try connection.mqttBroker(), clientID: "presencectl-tail-\(getpid())")
        var filters = zone == nil ? [topics.event(beacon: beacon, user: user)] : []
        if zones || zone != nil { filters.append(topics.zoneEvent(zone: zone ?? "+", user: user)) }
        let topic = filters.joined(separator: " and ")
        mqtt.subscriptions = filters.map { MQTTSubscription($0, qos: 1) }
        let client = try MQTTClient(configuration: mqtt, logger: logger)
        let tail = SubscriptionService(client: client, limit: limit, listening: { StandardStreams.error("listening for events on \(topic)") }) {
            [json] message in
            guard let line = json ? String(decoding: message.payload, as: UTF8.self) : EventLine.text(message.payload) else { return }
            StandardStreams.output(Array((line + "\n").utf8))
        }
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: tail, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// An event payload as one readable line.
enum EventLine {
    /// "2026-11-25T15:03:22.100Z  enter  alice  at booth-a  (near, 1.8 m)" or
    /// "…  exit   alice  from booth-a  (moved, 54 s there)"; for a zone's, "…  enter  alice  into zone
    /// hall-b" or "…  exit   alice  out of zone hall-b  (timeout, 95 s in it)"; nil for a payload
    /// that is not an event.
    static func text(_ payload: [UInt8]) -> String? {
        guard let event = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
              let kind = event["event"] as? String, let user = event["user"] as? String, let beacon = event["beacon"] as? String,
              let at = (event["at"] as? NSNumber)?.int64Value else { return nil }
        let when = Timestamps.iso8601(at)
        if let zone = event["zone"] as? String {
            guard kind == "exit" else { return "\(when)  enter  \(user)  into zone \(zone)" }
            var details: [String] = []
            if let reason = event["reason"] as? String { details.append(reason) }
            if let dwell = (event["dwell"] as? NSNumber)?.doubleValue { details.append("\(Int(dwell.rounded())) s in it") }
            return "\(when)  exit   \(user)  out of zone \(zone)" + (details.isEmpty ? "" : "  (\(details.joined(separator: ", ")))")
        }
        if kind == "enter" {
            var details: [String] = []
            if let proximity = event["proximity"] as? String { details.append(proximity) }
            if let distance = (event["distance"] as? NSNumber)?.doubleValue { details.append(String(format: "%.1f m", distance)) }
            return "\(when)  enter  \(user)  at \(beacon)" + (details.isEmpty ? "" : "  (\(details.joined(separator: ", ")))")
        }
        var details: [String] = []
        if let reason = event["reason"] as? String { details.append(reason) }
        if let dwell = (event["dwell"] as? NSNumber)?.doubleValue { details.append("\(Int(dwell.rounded())) s there") }
        return "\(when)  exit   \(user)  from \(beacon)" + (details.isEmpty ? "" : "  (\(details.joined(separator: ", ")))")
    }
}
