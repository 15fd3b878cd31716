import Foundation
import Logging
import PresenceCore

/// A dedicated connection that LISTENs on channels and delivers notifications as `events`.
/// It runs on its own thread, waiting with `poll()` on the connection's socket; when the
/// connection is lost it reconnects under its retry policy (`PostgresClient.listener(channels:)`
/// gives the client's), re-issues every LISTEN
/// and yields `.reconnected`. Channel names are identifiers (ASCII letters, digits, `_`, `$`,
/// not starting with a digit, at most 63 bytes) and are quoted, so case is kept: `NOTIFY` them
/// with `pg_notify('Name', ...)` or a quoted name. With an invalid name the listener logs an
/// error and its events end at once.
public final class PostgresListener: Sendable {
    /// The events, for one consumer.
    public let events: PostgresListenerEvents
    private let configuration: PostgresConfiguration
    private let channels: [String]
    private let retry: RetryPolicy
    private let logger: Logger
    private let continuation: AsyncStream<PostgresListenerEvent>.Continuation
    private let signals: ListenerSignals

    public init(configuration: PostgresConfiguration, channels: [String], retry: RetryPolicy = RetryPolicy(), logger: Logger) {
        let (stream, continuation) = AsyncStream.makeStream(of: PostgresListenerEvent.self, bufferingPolicy: .unbounded)
        let signals = ListenerSignals()
        self.events = PostgresListenerEvents(stream: stream)
        self.configuration = configuration
        self.channels = channels
        self.retry = retry
        self.logger = logger
        self.continuation = continuation
        self.signals = signals
        continuation.onTermination = { _ in signals.requestStop() }
    }

    /// True for a name `LISTEN` can take here.
    public static func isValidChannel(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 63, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return false
        }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
        }
    }

    /// Starts the listener's thread. Calls after the first (or after `stop()`) do nothing.
    public func start() {
        guard signals.claimStart() else { return }
        let thread = Thread { [configuration, channels, retry, logger, continuation, signals] in
            ListenerLoop(
                configuration: configuration, channels: channels, retry: retry, logger: logger,
                continuation: continuation, signals: signals
            ).run()
        }
        thread.name = "postgres-listener"
        thread.start()
    }

    /// Stops listening, closes the connection, joins the thread and finishes `events`. Idempotent.
    public func stop() {
        signals.requestStop()
        signals.waitUntilFinished()
        continuation.finish()
    }

    deinit {
        signals.requestStop()
        continuation.finish()
    }
}
