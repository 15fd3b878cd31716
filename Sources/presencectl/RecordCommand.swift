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
            Stops after --for, or on SIGINT/SIGTERM.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Option(help: "The file to write (appended to if it exists).") var out: String
    @Option(name: .customLong("for"), help: "Stop after this long, such as 10m.") var duration: String?

    func run() async throws {
        let limit = try duration.map { try DurationText.milliseconds($0, what: "--for") }
        let topics = try connection.topics()
        let broker = try connection.mqttBroker()
        guard let file = fopen(out, "a") else {
            throw ValueError("--out '\(out)' cannot be opened for writing: \(String(cString: strerror(errno)))")
        }
        let logger = Logger(label: "presencectl")
        var mqtt = MQTTConfiguration(broker: broker, clientID: "presencectl-record-\(getpid())")
        mqtt.subscriptions = [MQTTSubscription(topics.allSightings, qos: 1), MQTTSubscription(topics.allNodeStatuses, qos: 1),
                              MQTTSubscription(topics.allNodeStats, qos: 1)]
        let client = try MQTTClient(configuration: mqtt, logger: logger)
        let recorder = Recorder(client: client, file: FileHandleBox(file), limit: limit)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: recorder, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        fclose(file)
        StandardStreams.error("recorded \(recorder.count.value) batches to \(out)")
    }
}

/// A C file pointer handed to one task at a time.
final class FileHandleBox: @unchecked Sendable {  // used by the recorder's single task only
    let pointer: UnsafeMutablePointer<FILE>
    init(_ pointer: UnsafeMutablePointer<FILE>) {
        self.pointer = pointer
    }
}

/// A counter read after the recorder stopped.
final class Counter: @unchecked Sendable {  // written by one task, read after it ended
    var value = 0
}

/// Receives batches and appends them to the file until shut down or the time limit.
struct Recorder: Service {
    let client: MQTTClient
    let file: FileHandleBox
    let limit: Int64?
    let count = Counter()

    func run() async throws {
        try client.start()
        let deadline = limit.map { WallClock.milliseconds() + $0 }
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                if let deadline {
                    group.addTask { [client] in
                        try? await Task.sleep(for: .milliseconds(max(0, deadline - WallClock.milliseconds())))
                        await client.stop()
                    }
                }
                for await message in client.messages {
                    guard let line = Recording.line(payload: message.payload, topic: message.topic, received: WallClock.milliseconds()) else {
                        continue
                    }
                    line.withUnsafeBytes { _ = fwrite($0.baseAddress, 1, $0.count, file.pointer) }
                    fputc(0x0A, file.pointer)
                    fflush(file.pointer)
                    count.value += 1
                }
                group.cancelAll()
            }
        } onGracefulShutdown: { [client] in
            Task { await client.stop() }
        }
        await client.stop()
    }
}
