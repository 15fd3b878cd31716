import Logging

/// Logs of the benchmarks' own connections at warning and above, on standard error, so that the
/// figures on standard output stay readable.
func bootstrapBenchLogging() {
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = .warning
        return handler
    }
}
