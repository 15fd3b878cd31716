/// Times from outside (a payload, a recording, a database row) can hold any 64-bit value. The
/// pipeline keeps every time it computes with inside `representable`, about ±285,000 years around
/// the epoch in milliseconds, so that adding durations, ticks and lateness to it can never overflow.
public enum TimeBounds {
    /// The times the pipeline computes with, ms.
    public static let representable: ClosedRange<Int64> = -(1 << 53) ... (1 << 53)

    /// `time` moved into `representable`.
    public static func clamped(_ time: Int64) -> Int64 {
        min(max(time, representable.lowerBound), representable.upperBound)
    }

    /// `a + b`, held at the bounds of `Int64` instead of trapping.
    public static func sum(_ a: Int64, _ b: Int64) -> Int64 {
        let (value, overflow) = a.addingReportingOverflow(b)
        guard overflow else { return value }
        return b > 0 ? .max : .min
    }

    /// `a - b`, held at the bounds of `Int64` instead of trapping.
    public static func difference(_ a: Int64, _ b: Int64) -> Int64 {
        let (value, overflow) = a.subtractingReportingOverflow(b)
        guard overflow else { return value }
        return b < 0 ? .max : .min
    }
}
