import ArgumentParser
import Logging
import PresenceCLI
import PresenceDatabaseCLI
import PresenceCore
import PresenceMQTT
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Write every SightingBatch received, one JSON object per line, for `replay`.",
        discussion: """
            Each line is the batch as published with 'received' (ms since the epoch) and 'topic' put in front. The nodes' \
            status and stats messages are recorded the same way, since the engine takes node health into account. \
            With --espresense, --openmqttgateway or --theengs (the aggregator's flags), the foreign nodes' reports are \
            recorded too, and their status ('online', 'offline') as {"received":…,"topic":…,"text":…}. \
            Stops after --for, or on SIGINT/SIGTERM.
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var foreign: ForeignOptions
    @Option(help: "The file to write (appended to if it exists).") var out: String
    @Option(name: .customLong("for"), help: "Stop after this long, such as 10m.") var duration: String?

    func run() async throws {
        let limit = try duration.map { try DurationText.milliseconds($0, what: "--for") }
        let topics = try connection.topics()
        let foreignTopics = try foreign.topics()
        let broker = try connection.mqttBroker()
        guard let file = fopen(out, "a") else {
            throw ValueError("--out '\(out)' cannot be opened for writing: \(String(cString: strerror(errno)))")
        }
        let logger = Logger(label: "presencectl")
        var mqtt = MQTTConfiguration(broker: broker, clientID: "presencectl-record-\(getpid())")
        mqtt.subscriptions = [MQTTSubscription(topics.allSightings, qos: 1), MQTTSubscription(topics.allShardedSightings, qos: 1),
                              MQTTSubscription(topics.allNodeStatuses, qos: 1),
                              MQTTSubscription(topics.allNodeStats, qos: 1)]
        mqtt.subscriptions += foreignTopics.subscriptions.map { MQTTSubscription($0, qos: 0) }
        let client = try MQTTClient(configuration: mqtt, logger: logger)
        let writer = RecordingWriter(file: FileHandleBox(file))
        let recorder = SubscriptionService(client: client, limit: limit, handle: writer.write)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: recorder, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        fclose(file)
        StandardStreams.error("recorded \(writer.count) messages to \(out)")
    }
}

/// A C file pointer handed to one task at a time.
final class FileHandleBox: @unchecked Sendable {  // used by the recorder's single task only
    let pointer: UnsafeMutablePointer<FILE>
    init(_ pointer: UnsafeMutablePointer<FILE>) {
        self.pointer = pointer
    }
}

/// Appends each received message to the file as a recording line, and counts them.
final class RecordingWriter: @unchecked Sendable {  // written by the subscription's one consuming task, read after it ended
    let file: FileHandleBox
    var count = 0

    init(file: FileHandleBox) {
        self.file = file
    }

    func write(_ message: MQTTMessage) {
        guard let line = Recording.line(payload: message.payload, topic: message.topic, received: WallClock.milliseconds()) else { return }
        line.withUnsafeBytes { _ = fwrite($0.baseAddress, 1, $0.count, file.pointer) }
        fputc(0x0A, file.pointer)
        fflush(file.pointer)
        count += 1
    }
}
