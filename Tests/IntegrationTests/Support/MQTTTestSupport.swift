import Foundation
import Logging
import PresenceCore
import PresenceMQTT
import Synchronization

/// A client for `url` with a unique id, quick reconnects and `configure` applied; not started.
func makeMQTTClient(_ url: String, _ label: String, _ configure: (inout MQTTConfiguration) -> Void = { _ in }) throws -> MQTTClient {
    var configuration = MQTTConfiguration(url: try MQTTURL(parsing: url), clientID: "\(label)-\(UUID().uuidString.prefix(8))")
    configuration.retry = RetryPolicy(first: .seconds(1), longest: .seconds(2))
    configure(&configuration)
    var logger = Logger(label: "test.mqtt.\(label)")
    logger.logLevel = ProcessInfo.processInfo.environment["MQTT_TEST_TRACE"] == nil ? .notice : .trace
    return try MQTTClient(configuration: configuration, logger: logger)
}

/// A topic prefix no other test uses.
func uniqueTopic() -> String {
    "test/\(UUID().uuidString.lowercased())"
}

/// Runs `body`, or throws if it has not finished after `seconds` (and cancels it).
func within<T: Sendable>(_ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw TestSetupError(message: "timed out after \(seconds) s waiting for \(what)")
        }
        return value
    }
}

/// Waits until `condition` holds, checking every 20 ms; throws after `seconds` of checks. What is
/// counted is the checks made, not the wall clock: while synchronous helpers (a condition's psql,
/// `PipelineHarness.ctl`) hold the concurrency pool's threads, two here, neither this task nor a
/// task it waits for runs, and that time is not held against what it waits for.
func eventually(_ seconds: Double, _ what: String, _ condition: () -> Bool) async throws {
    var checks = Int((seconds / 0.02).rounded(.up))
    while !condition() {
        guard checks > 0 else {
            throw TestSetupError(message: "timed out after \(seconds) s waiting for \(what)")
        }
        checks -= 1
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Reads `value` every 100 ms until it is `expected` or `seconds` have passed, and returns the last
/// reading: an expectation on it shows what was there instead.
func lastReading<T: Equatable>(within seconds: Double, until expected: T, _ value: () -> T) async throws -> T {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while true {
        let reading = value()
        if reading == expected || ContinuousClock.now >= deadline { return reading }
        try await Task.sleep(for: .milliseconds(100))
    }
}

/// The next `count` messages of `messages`; throws if they do not all come within `seconds`.
func next(_ count: Int, from messages: MQTTMessages, within seconds: Double = 10) async throws -> [MQTTMessage] {
    try await within(seconds, "\(count) messages") {
        var received: [MQTTMessage] = []
        for await message in messages {
            received.append(message)
            if received.count == count { break }
        }
        return received
    }
}

extension MQTTMessage {
    /// The payload as UTF-8 text, for readable expectations.
    var text: String { String(decoding: payload, as: UTF8.self) }
}

/// Shuts down, without closing, every socket of this process connected to 127.0.0.1:`port`: the
/// owner sees its connection end as if the network had cut it, and the broker sees no DISCONNECT.
func cutConnections(toPort port: Int) -> Int {
    var cut = 0
    for fd in Int32(0)..<4096 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let rc = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard rc == 0, address.sin_family == sa_family_t(AF_INET), Int(UInt16(bigEndian: address.sin_port)) == port else {
            continue
        }
        if shutdown(fd, Int32(SHUT_RDWR)) == 0 { cut += 1 }
    }
    return cut
}

extension ChildProcess {
    /// The lines the child has written to standard output so far.
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// A flag set in one task and read in another.
final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// Keeps the messages logged through its loggers, for tests of what a component reports.
final class LogRecorder: Sendable {
    private let messages = Mutex<[String]>([])

    var recorded: [String] { messages.withLock { $0 } }

    func logger(_ label: String) -> Logger {
        Logger(label: label) { _ in Handler(recorder: self) }
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel = Logger.Level.trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let error = event.metadata?["error"].map { " \($0)" } ?? ""
            recorder.messages.withLock { $0.append("\(event.level): \(event.message)\(error)") }
        }
    }
}
