/// Epoch milliseconds as ISO 8601 in UTC with milliseconds (`2026-11-22T03:05:23.123Z`), computed
/// from the integer (`CivilDate`), so that no binary fraction of a second turns …35.050 into …35.049.
public enum ISO8601Text {
    public static func string(milliseconds: Int64) -> String {
        let milliseconds = TimeBounds.clamped(milliseconds)
        let (days, millisecondOfDay) = floorDivision(milliseconds, 86_400_000)
        let (year, month, day) = CivilDate.date(days: days)
        let second = millisecondOfDay / 1000
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))T\(padded(second / 3600, 2)):\(padded(second / 60 % 60, 2))"
            + ":\(padded(second % 60, 2)).\(padded(millisecondOfDay % 1000, 3))Z"
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let remainder = (value % divisor + divisor) % divisor
        return ((value - remainder) / divisor, remainder)
    }

    private static func padded(_ value: Int64, _ width: Int) -> String {
        let digits = String(abs(value))
        return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
