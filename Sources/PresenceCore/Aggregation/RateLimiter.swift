/// Says whether a log line about external input may be written now: at most one per key and
/// interval, with the number held back in between, so that a flood of garbage cannot flood the log.
/// Keys come from a bounded set (reasons, registered nodes), never from what a stranger sends.
public struct RateLimiter: Sendable {
    public let interval: Int64
    private var last: [String: Int64] = [:]
    private var held: [String: Int] = [:]

    public init(interval: Int64 = 10_000) {
        self.interval = interval
    }

    /// At `time` (ms): nil when a line under `key` was let through too recently (this one is held
    /// back), else how many were held back since the last one let through.
    public mutating func admit(_ key: String, at time: Int64) -> Int? {
        if let previous = last[key], TimeBounds.difference(time, previous) < interval {
            held[key, default: 0] += 1
            return nil
        }
        last[key] = time
        return held.removeValue(forKey: key) ?? 0
    }
}
