import ArgumentParser
import Foundation
import Logging
import PresenceCLI
import PresenceCore
import PresenceMQTT

struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "The fleet's health as the aggregator last published it: problems first, then every beacon, tag and node.",
        discussion: """
            Reads the retained {prefix}/v1/health (a login that may read it: presence-reader). Problems are low batteries \
            (Eddystone TLM), beacons and tags not heard for too long, nodes down and nodes whose clock is off, by the \
            aggregator's thresholds. Exits 0 with the problems listed; with --check, exits 1 when there is a problem or the \
            report is stale (older than twice the aggregator's --health-interval, plus 10 s), for monitoring. Exits non-zero \
            when no report arrives within --for.
            """)

    @OptionGroup var broker: BrokerOptions
    @Flag(help: "Print the report's JSON as published instead.") var json = false
    @Flag(help: "Exit 1 when the report lists a problem or is stale.") var check = false
    @Option(name: .customLong("for"), help: "How long to wait for the report, such as 5s.") var duration = "5s"

    func run() async throws {
        let limit = try DurationText.milliseconds(duration, what: "--for")
        let topics = try broker.topics()
        guard let payload = try await Self.retained(topics.health, broker: try broker.mqttBroker(), within: limit) else {
            throw ValueError("no health report on \(topics.health) within \(duration): is an aggregator running, and may this login read it?")
        }
        let report: FleetReport
        do {
            report = try JSONDecoder().decode(FleetReport.self, from: Data(payload))
        } catch {
            throw ValueError("the report on \(topics.health) is not a health report: \(error)")
        }
        let now = WallClock.milliseconds()
        if json {
            StandardStreams.output(payload + [0x0A])
        } else {
            print(HealthText.render(report, now: now))
        }
        let stale = HealthText.isStale(report, now: now)
        if stale { StandardStreams.error("the report is \(HealthText.age(TimeBounds.difference(now, report.at))) old: is the aggregator running?") }
        if check, stale || !report.problems.isEmpty {
            throw ValueError("\(report.problems.count) problem\(report.problems.count == 1 ? "" : "s")\(stale ? ", and the report is stale" : "")")
        }
    }

    /// The retained payload on `topic`, or nil when none arrives within `limit` ms of the start.
    static func retained(_ topic: String, broker: MQTTBroker, within limit: Int64) async throws -> [UInt8]? {
        var mqtt = MQTTConfiguration(broker: broker, clientID: "presencectl-health-\(getpid())")
        mqtt.subscriptions = [MQTTSubscription(topic, qos: 1)]
        let client = try MQTTClient(configuration: mqtt, logger: Logger(label: "presencectl"))
        try client.start()
        let outcome = await withTaskGroup(of: Result<[UInt8]?, any Error>.self) { group in
            group.addTask {
                do {
                    try await client.waitUntilConnected()
                } catch {
                    return .failure(error)
                }
                for await message in client.messages where message.topic == topic && !message.payload.isEmpty {
                    return .success(message.payload)
                }
                return .success(nil)
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(limit))
                return .success(nil)
            }
            let first = await group.next() ?? .success(nil)
            group.cancelAll()
            return first
        }
        await client.stop()
        return try outcome.get()
    }
}
