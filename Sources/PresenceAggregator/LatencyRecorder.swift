import Histogram
import Synchronization

/// How long decided events waited until the broker acknowledged them, in ms, since the last
/// summary: recorded by the publishing side, summarised (and reset) for each stats message.
final class LatencyRecorder: Sendable {
    private let histogram = Mutex(Histogram<UInt64>(highestTrackableValue: 3_600_000, numberOfSignificantValueDigits: .two))

    /// Records one event's wait; negative waits (a clock step) count as 0.
    func record(milliseconds: Int64) {
        _ = histogram.withLock { $0.record(UInt64(clamping: max(0, milliseconds))) }
    }

    /// The waits recorded since the last summary, then starts afresh.
    func takeSummary() -> LatencySummary {
        histogram.withLock { histogram in
            defer { histogram.reset() }
            return LatencySummary(count: Int(clamping: histogram.totalCount), p50: histogram.valueAtPercentile(50),
                                  p99: histogram.valueAtPercentile(99), max: histogram.max)
        }
    }
}

/// Percentiles of recorded waits, ms (all 0 when nothing was recorded).
struct LatencySummary: Sendable, Equatable {
    var count: Int
    var p50: UInt64
    var p99: UInt64
    var max: UInt64
}
