/// A number followed by one of a few units (`15s`, `200MiB`), as people type them on a command
/// line: the value in the base unit, or nil when the text is not such a number.
enum QuantityText {
    /// `text` read with `units` (suffixes and their factors, the longer suffixes first); a bare
    /// number takes `bare` as its factor.
    static func value(_ text: String, units: [(suffix: String, factor: Double)], bare: Double) -> Double? {
        var number = Substring(text)
        var factor = bare
        for unit in units where text.hasSuffix(unit.suffix) {
            number = text.dropLast(unit.suffix.count)
            factor = unit.factor
            break
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let value = Double(number), value.isFinite else {
            return nil
        }
        return value * factor
    }
}
