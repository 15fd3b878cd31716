import CLibPQ
import Foundation
import Logging
import PresenceCore

/// The body of a `PostgresListener`'s thread: connect, LISTEN, wait for notifications, and on
/// connection loss start over after a back-off. Made and used on that thread only; the `PGconn`
/// it opens never leaves `run()`.
final class ListenerLoop {
    private let configuration: PostgresConfiguration
    private let channels: [String]
    private let retry: RetryPolicy
    private let logger: Logger
    private let continuation: AsyncStream<PostgresListenerEvent>.Continuation
    private let signals: ListenerSignals
    /// Outlives every `PGconn` of the loop: libpq holds an unretained pointer to it.
    private let notices: NoticeSink
    private let redact: @Sendable (String) -> String

    init(
        configuration: PostgresConfiguration, channels: [String], retry: RetryPolicy, logger: Logger,
        continuation: AsyncStream<PostgresListenerEvent>.Continuation, signals: ListenerSignals
    ) {
        self.configuration = configuration
        self.channels = channels
        self.retry = retry
        self.logger = logger
        self.continuation = continuation
        self.signals = signals
        self.notices = NoticeSink(logger: logger)
        self.redact = ConnectionString.redactor(for: configuration.url)
    }

    func run() {
        defer {
            continuation.finish()
            signals.markFinished()
        }
        if let invalid = channels.first(where: { !PostgresListener.isValidChannel($0) }) {
            logger.error("invalid LISTEN channel name, listener not started", metadata: ["postgres.channel": "\(invalid)"])
            return
        }
        var listenedBefore = false
        var failures = 0
        while !signals.isStopRequested {
            if let connection = connect() {
                if listen(connection) {
                    continuation.yield(listenedBefore ? .reconnected : .listening)
                    logger.info(listenedBefore ? "listener reconnected" : "listener started", metadata: [
                        "postgres.channels": "\(channels.joined(separator: ","))",
                    ])
                    listenedBefore = true
                    failures = 0
                    receive(connection)
                }
                PQfinish(connection)
            }
            if signals.isStopRequested { break }
            failures += 1
            let delay = retry.delay(after: failures)
            logger.info("listener reconnecting after a delay", metadata: ["delay": "\(delay)"])
            let milliseconds = Int32(clamping: delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)
            if waitForSocket(-1, events: 0, wakeFD: signals.wakeFD, timeoutMilliseconds: milliseconds) == .woken {
                break
            }
        }
    }

    /// Connects without blocking past a stop request or `connectTimeout`; nil if it failed.
    private func connect() -> OpaquePointer? {
        let started = try? ConnectionString.withParameters(configuration) { keywords, values in
            PQconnectStartParams(keywords, values, 1)
        }
        guard let connection = started.flatMap({ $0 }) else {
            logger.error("libpq could not allocate a connection")
            return nil
        }
        notices.install(on: connection)
        let deadline = ContinuousClock.now + .seconds(max(configuration.connectTimeout, 2))
        var status = PQstatus(connection) == CONNECTION_BAD ? PGRES_POLLING_FAILED : PGRES_POLLING_WRITING
        while true {
            switch status {
            case PGRES_POLLING_OK:
                return connection
            case PGRES_POLLING_FAILED:
                fail(connection, PostgresError.libpq(result: nil, connection: connection, redact: redact))
                return nil
            default:
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else {
                    fail(connection, PostgresError(kind: .connection, message: "timeout expired while connecting"))
                    return nil
                }
                let milliseconds = Int32(clamping: Int64((remaining / .milliseconds(1)).rounded(.up)))
                let events = Int16(status == PGRES_POLLING_READING ? POLLIN : POLLOUT)
                switch waitForSocket(PQsocket(connection), events: events, wakeFD: signals.wakeFD, timeoutMilliseconds: milliseconds) {
                case .woken:
                    PQfinish(connection)
                    return nil
                case .timedOut:
                    continue
                case .ready:
                    status = PQconnectPoll(connection)
                }
            }
        }
    }

    private func fail(_ connection: OpaquePointer, _ error: PostgresError) {
        logger.warning("listener could not connect", metadata: ["postgres.target": "\(configuration)", "error": "\(error)"])
        PQfinish(connection)
    }

    /// Issues `LISTEN "channel"` for every channel; false (logged) if one failed.
    private func listen(_ connection: OpaquePointer) -> Bool {
        for channel in channels {
            guard let result = PQexec(connection, "LISTEN \"\(channel)\"") else {
                logListenFailure(PostgresError.libpq(result: nil, connection: connection), channel)
                return false
            }
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_COMMAND_OK else {
                logListenFailure(PostgresError.libpq(result: result, connection: connection), channel)
                return false
            }
        }
        return true
    }

    private func logListenFailure(_ error: PostgresError, _ channel: String) {
        logger.warning("LISTEN failed", metadata: ["postgres.channel": "\(channel)", "error": "\(error)"])
    }

    /// Delivers notifications until the connection is lost or a stop is requested.
    private func receive(_ connection: OpaquePointer) {
        while true {
            deliverNotifications(connection)
            let socket = PQsocket(connection)
            guard socket >= 0 else { return }
            switch waitForSocket(socket, events: Int16(POLLIN), wakeFD: signals.wakeFD, timeoutMilliseconds: 1000) {
            case .woken:
                return
            case .timedOut:
                if signals.isStopRequested { return }
            case .ready:
                let consumed = PQconsumeInput(connection) == 1
                deliverNotifications(connection)
                guard consumed, PQstatus(connection) == CONNECTION_OK else {
                    logger.warning("listener connection lost", metadata: [
                        "error": "\(PostgresError.libpq(result: nil, connection: connection, redact: redact))",
                    ])
                    return
                }
            }
        }
    }

    private func deliverNotifications(_ connection: OpaquePointer) {
        while let notification = PQnotifies(connection) {
            defer { PQfreemem(notification) }
            let channel = notification.pointee.relname.map { String(cString: $0) } ?? ""
            let payload = notification.pointee.extra.map { String(cString: $0) } ?? ""
            continuation.yield(.notification(channel: channel, payload: payload))
        }
    }
}
