import Foundation
import PresenceCore
import PresenceMQTT
import Synchronization

/// One test's own slice of the shared servers: a fresh database, a unique topic prefix, and the
/// project's executables run against them with the environment variables the README documents.
struct PipelineHarness: Sendable {
    let databaseURL: String
    let brokerURL: String
    let prefix: String
    let topics: Topics
    /// The aggregator's state folder (its journal), the same for every run of this harness.
    let stateDirectory: String

    /// A harness on the shared servers, or on `database`, `broker` and `prefix` when given.
    init(_ label: String, database: String? = nil, broker: String? = nil, prefix: String? = nil) throws {
        databaseURL = try database ?? TestDatabase.create(label)
        brokerURL = try broker ?? TestServers.get().brokerURL
        self.prefix = prefix ?? "t\(UInt32.random(in: .min ... .max))"
        topics = try Topics(prefix: self.prefix)
        stateDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("presence-state-\(self.prefix)").path
    }

    var environment: [String: String] {
        ["PRESENCE_DATABASE_URL": databaseURL, "PRESENCE_BROKER_URL": brokerURL, "PRESENCE_TOPIC_PREFIX": prefix]
    }

    /// Runs `presencectl` to completion. Another thread waits for it, so the awaiting task holds
    /// none of the concurrency pool's threads, which every test running meanwhile needs.
    func ctlAsync(_ arguments: String...) async throws -> CommandResult {
        try await ctlAsync(arguments)
    }

    func ctlAsync(_ arguments: [String]) async throws -> CommandResult {
        let child = try startCtl(arguments)
        return CommandResult(status: await child.wait(), of: child)
    }

    /// Runs `presencectl` and fails the test setup unless it succeeds.
    @discardableResult
    func ctlOKAsync(_ arguments: String...) async throws -> String {
        try Self.output(of: await ctlAsync(arguments), arguments)
    }

    /// `ctlAsync`, holding the calling thread until `presencectl` ends: for synchronous code, such as
    /// `eventually`'s conditions, and the suites that call it so.
    func ctl(_ arguments: String...) throws -> CommandResult {
        try ctl(arguments)
    }

    func ctl(_ arguments: [String]) throws -> CommandResult {
        let child = try startCtl(arguments)
        return CommandResult(status: child.waitBlocking(), of: child)
    }

    /// `ctlOKAsync`, holding the calling thread until `presencectl` ends.
    @discardableResult
    func ctlOK(_ arguments: String...) throws -> String {
        try Self.output(of: ctl(arguments), arguments)
    }

    private func startCtl(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess.spawn(try PackagePaths.executable("presencectl"), arguments, environment: environment)
    }

    /// What `presencectl arguments` printed, or an error unless it succeeded.
    private static func output(of result: CommandResult, _ arguments: [String]) throws -> String {
        guard result.status == 0 else {
            throw TestSetupError(message: "presencectl \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
        }
        return result.stdout
    }

    /// Starts `presence-aggregator` with `arguments` (stats every second, debug logs, the
    /// harness's state folder).
    func startAggregator(_ arguments: [String] = []) throws -> ChildProcess {
        try ChildProcess.spawn(try PackagePaths.executable("presence-aggregator"),
                               ["--stats-interval", "1s", "--log-level", "debug", "--state-dir", stateDirectory] + arguments, environment: environment)
    }

    /// Rows of a query, fields separated by `|`.
    func rows(_ sql: String) throws -> [String] {
        try TestDatabase.rows(databaseURL, sql)
    }

    /// A started recorder of every message under the prefix, on the broker at `url` (the
    /// harness's by default). A `persistent` one keeps its broker session as the aggregator does
    /// (MQTT 3.1.1 without clean session), so that a persistent broker's restart loses nothing of it.
    func recorder(on url: String? = nil, persistent: Bool = false) async throws -> BusRecorder {
        let recorder = try BusRecorder(url: url ?? brokerURL, filter: "\(prefix)/#") {
            guard persistent else { return }
            $0.cleanSession = false
            $0.protocolVersion = .v311
        }
        try await recorder.start()
        return recorder
    }

    /// A started client for publishing test traffic, on the broker at `url` (the harness's by default).
    func publisher(on url: String? = nil) async throws -> MQTTClient {
        let client = try makeMQTTClient(url ?? brokerURL, "publisher")
        try client.start()
        try await within(10, "the publisher to connect") { try await client.waitUntilConnected() }
        return client
    }
}

/// What a finished command printed and returned.
struct CommandResult: Sendable {
    let status: Int32
    let stdout: String
    let stderr: String
}

extension CommandResult {
    /// The result of `child`, which ended with `status`.
    init(status: Int32, of child: ChildProcess) {
        self.init(status: status, stdout: child.stdout, stderr: child.stderr)
    }
}

/// Subscribes to a filter and keeps every message with its arrival time, for expectations.
final class BusRecorder: Sendable {
    struct Received: Sendable {
        let at: ContinuousClock.Instant
        let message: MQTTMessage
    }

    let client: MQTTClient
    private let received = Mutex<[Received]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(url: String, filter: String, _ configure: (inout MQTTConfiguration) -> Void = { _ in }) throws {
        client = try makeMQTTClient(url, "recorder") {
            $0.subscriptions = [MQTTSubscription(filter, qos: 1)]
            configure(&$0)
        }
    }

    func start() async throws {
        try client.start()
        try await within(10, "the recorder to connect") { try await self.client.waitUntilConnected() }
        let consumer = Task { [client] in
            for await message in client.messages {
                self.received.withLock { $0.append(Received(at: .now, message: message)) }
            }
        }
        task.withLock { $0 = consumer }
        try await Task.sleep(for: .milliseconds(300))
    }

    func stop() async {
        await client.stop()
        task.withLock { $0?.cancel() }
    }

    var messages: [MQTTMessage] {
        received.withLock { $0.map(\.message) }
    }

    func messages(on topicPrefix: String) -> [MQTTMessage] {
        messages.filter { $0.topic.hasPrefix(topicPrefix) }
    }

    /// The decoded JSON objects published on topics starting with `topicPrefix`, in order.
    func objects(on topicPrefix: String) -> [[String: Any]] {
        messages(on: topicPrefix).compactMap { message in
            (try? JSONSerialization.jsonObject(with: Data(message.payload))) as? [String: Any]
        }
    }

    /// Waits until `condition` holds on the messages so far.
    func wait(_ seconds: Double, for what: String, _ condition: @escaping ([MQTTMessage]) -> Bool) async throws {
        try await eventually(seconds, what) { condition(self.messages) }
    }
}

extension MQTTClient {
    /// Publishes a SightingBatch from `node` with QoS 1.
    func publish(_ batch: SightingBatch, topics: Topics) async throws {
        try await publish(MQTTMessage(topic: topics.sightings(node: batch.node), payload: batch.encoded(), qos: 1))
    }
}

/// The current time in ms since the epoch.
func nowMilliseconds() -> Int64 {
    WallClock.milliseconds()
}
