import CLibPQ
import Logging

/// Where a connection's server NOTICEs and WARNINGs go instead of stderr: the connection's logger.
/// libpq gets an unretained pointer to it as the receiver's `arg`; whoever installs it keeps it
/// alive until after `PQfinish`.
final class NoticeSink: Sendable {
    let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Routes the notices of `connection` here; they are received on the thread calling libpq.
    func install(on connection: OpaquePointer) {
        PQsetNoticeReceiver(connection, receiveNotice, Unmanaged.passUnretained(self).toOpaque())
    }

    fileprivate func receive(_ result: OpaquePointer) {
        let severity = PQresultErrorField(result, PG_DIAG_SEVERITY_NONLOCALIZED).map { String(cString: $0) } ?? "NOTICE"
        let message = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY).map { String(cString: $0) }
            ?? PQresultErrorMessage(result).map { String(cString: $0) } ?? ""
        let sqlState = PQresultErrorField(result, PG_DIAG_SQLSTATE).map { String(cString: $0) } ?? ""
        let level: Logger.Level = switch severity {
        case "WARNING": .warning
        case "NOTICE": .notice
        case "DEBUG": .debug
        case "FATAL", "PANIC", "ERROR": .error
        default: .info
        }
        logger.log(level: level, "server notice", metadata: [
            "postgres.severity": "\(severity)",
            "postgres.sqlstate": "\(sqlState)",
            "postgres.message": "\(message)",
        ])
    }
}

/// libpq's `PQnoticeReceiver`: finds the sink through its `arg`, never through a global.
private func receiveNotice(_ arg: UnsafeMutableRawPointer?, _ result: OpaquePointer?) {
    guard let arg, let result else { return }
    Unmanaged<NoticeSink>.fromOpaque(arg).takeUnretainedValue().receive(result)
}
