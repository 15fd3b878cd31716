import Logging
import PresenceCore

/// Log levels as typed on the command line.
public enum LogOptions {
    public static func level(_ text: String) throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw ValueError("--log-level '\(text)' is not valid: expected trace, debug, info, notice, warning, error or critical")
        }
        return level
    }

    /// Sends logs to standard error at `level`.
    public static func bootstrap(level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
