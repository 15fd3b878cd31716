/// A length of time in seconds for people, to the second: `42s`, `3m 52s`, `2h 05m 10s`.
public enum ElapsedText {
    public static func format(seconds: Double) -> String {
        guard seconds.isFinite else { return "-" }
        let total = Int64(seconds.rounded())
        let (hours, minutes, rest) = (total / 3600, total % 3600 / 60, total % 60)
        if hours > 0 { return "\(hours)h \(twoDigits(minutes))m \(twoDigits(rest))s" }
        if minutes > 0 { return "\(minutes)m \(twoDigits(rest))s" }
        return "\(rest)s"
    }

    private static func twoDigits(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : String(value)
    }
}
