/// Durations as people type them on a command line: `15s`, `500ms`, `2m`, `1h`, `1d`, or a bare
/// number of seconds. Parsed to milliseconds.
public enum DurationText {
    /// Milliseconds in `text`, or an error naming the value and the expected forms.
    public static func milliseconds(_ text: String, what: String = "duration") throws(ValueError) -> Int64 {
        let units: [(suffix: String, factor: Double)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        guard let milliseconds = QuantityText.value(text, units: units, bare: 1000), milliseconds < 1e15 else {
            throw ValueError("\(what) '\(text)' is not valid: expected a number with a unit, such as 15s, 500ms, 2m, 1h or 7d")
        }
        return Int64(milliseconds.rounded())
    }

    /// A compact rendering of `milliseconds` (`1500ms`, `15s`, `2m`).
    public static func format(_ milliseconds: Int64) -> String {
        if milliseconds % 3_600_000 == 0, milliseconds >= 3_600_000 { return "\(milliseconds / 3_600_000)h" }
        if milliseconds % 60_000 == 0, milliseconds >= 60_000 { return "\(milliseconds / 60_000)m" }
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000)s" }
        return "\(milliseconds)ms"
    }
}
