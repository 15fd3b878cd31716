/// Voltages as people type them on a command line: `2500mV`, `2.5V`, or a bare number of mV.
/// Parsed to millivolts, the unit Eddystone TLM reports.
public enum VoltageText {
    /// Millivolts in `text` (1 to 65535, TLM's range), or an error naming the value and the expected forms.
    public static func millivolts(_ text: String, what: String = "voltage") throws(ValueError) -> Int {
        guard let millivolts = QuantityText.value(text, units: [("mV", 1), ("V", 1000)], bare: 1), (1 ... 65_535).contains(millivolts.rounded()) else {
            throw ValueError("\(what) '\(text)' is not valid: expected a battery voltage such as 2500mV or 2.5V")
        }
        return Int(millivolts.rounded())
    }
}
