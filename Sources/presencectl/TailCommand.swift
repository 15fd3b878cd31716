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
        abstract: "Print enter and exit events as the aggregator publishes them, one readable line each.",
        discussion: "Needs a broker login that may read events (presence-reader). Stops after --for, or on SIGINT/SIGTERM.")

    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Only this user's events.") var user: String?
    @Option(help: "Only events at this beacon.") var beacon: String?
    @Flag(help: "Print each event's JSON as published instead.") var json = false
    @Option(name: .customLong("for"), help: "Stop after this long, such as 10m.") var duration: String?

    func run() async throws {
        let limit = try duration.map { try DurationText.milliseconds($0, what: "--for") }
        let user = try user.map { try Slug($0, what: "user").value } ?? "+"
        let beacon = try beacon.map { try Slug($0, what: "beacon").value } ?? "+"
        let topics = try connection.topics()
        let logger = Logger(label: "presencectl")
        var mqtt = MQTTConfiguration(broker: try connection.mqttBroker(), clientID: "presencectl-tail-\(getpid())")
        mqtt.subscriptions = [MQTTSubscription(topics.event(beacon: beacon, user: user), qos: 1)]
        let client = try MQTTClient(configuration: mqtt, logger: logger)
        let tail = EventTail(client: client, topic: mqtt.subscriptions[0].filter, limit: limit, json: json)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: tail, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// Prints events until shut down or the time limit; says on standard error once it listens.
struct EventTail: Service {
    let client: MQTTClient
    let topic: String
    let limit: Int64?
    let json: Bool

    func run() async throws {
        try client.start()
        let deadline = limit.map { WallClock.milliseconds() + $0 }
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [client, topic] in
                    if (try? await client.waitUntilConnected()) != nil { StandardStreams.error("listening for events on \(topic)") }
                }
                if let deadline {
                    group.addTask { [client] in
                        try? await Task.sleep(for: .milliseconds(max(0, deadline - WallClock.milliseconds())))
                        await client.stop()
                    }
                }
                for await message in client.messages {
                    guard let line = json ? String(decoding: message.payload, as: UTF8.self) : Self.line(message.payload) else { continue }
                    StandardStreams.output(Array((line + "\n").utf8))
                }
                group.cancelAll()
            }
        } onGracefulShutdown: { [client] in
            Task { await client.stop() }
        }
        await client.stop()
    }

    /// "2026-11-25T15:03:22.100Z  enter  alice  at booth-a  (near, 1.8 m)" or
    /// "…  exit   alice  from booth-a  (moved, 54 s there)"; nil for a payload that is not an event.
    static func line(_ payload: [UInt8]) -> String? {
        guard let event = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
              let kind = event["event"] as? String, let user = event["user"] as? String, let beacon = event["beacon"] as? String,
              let at = (event["at"] as? NSNumber)?.int64Value else { return nil }
        let when = Timestamps.iso8601(at)
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
