import Logging

/// Logs what bad input can trigger at most once per interval and key, saying how many were
/// suppressed in between, so a flood of garbage cannot flood the log.
struct RateLimitedLog: Sendable {
    private var last: [String: Int64] = [:]
    private var suppressed: [String: Int] = [:]
    let interval: Int64

    init(interval: Int64 = 10_000) {
        self.interval = interval
    }

    /// Logs `message` at warning level under `key` at `time` (ms) unless it was logged for that
    /// key too recently. Keys must come from a bounded set (reasons, registered nodes), never
    /// from what a stranger sends.
    mutating func warning(_ logger: Logger, key: String, at time: Int64, _ message: Logger.Message, metadata: Logger.Metadata = [:]) {
        log(logger, .warning, key: key, at: time, message, metadata: metadata)
    }

    /// `warning(_:key:at:_:metadata:)` at notice level.
    mutating func notice(_ logger: Logger, key: String, at time: Int64, _ message: Logger.Message, metadata: Logger.Metadata = [:]) {
        log(logger, .notice, key: key, at: time, message, metadata: metadata)
    }

    private mutating func log(_ logger: Logger, _ level: Logger.Level, key: String, at time: Int64, _ message: Logger.Message,
                              metadata: Logger.Metadata) {
        if let previous = last[key], time - previous < interval {
            suppressed[key, default: 0] += 1
            return
        }
        var metadata = metadata
        if let count = suppressed.removeValue(forKey: key), count > 0 { metadata["suppressed"] = "\(count)" }
        last[key] = time
        logger.log(level: level, message, metadata: metadata)
    }
}
