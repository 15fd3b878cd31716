/// Sizes as people type them on a command line: `1GiB`, `200MiB`, `64KiB`, `1048576` (bytes), or
/// with decimal units (`1GB`, `500MB`, `64kB`).
public enum ByteCountText {
    /// Bytes in `text`, or an error naming the value and the expected forms.
    public static func bytes(_ text: String, what: String = "size") throws(ValueError) -> UInt64 {
        let units: [(suffix: String, factor: Double)] = [
            ("GiB", 1_073_741_824), ("MiB", 1_048_576), ("KiB", 1_024), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3), ("B", 1),
        ]
        guard let bytes = QuantityText.value(text, units: units, bare: 1), bytes >= 1, bytes < 1e18 else {
            throw ValueError("\(what) '\(text)' is not valid: expected a size such as 1GiB, 200MiB or 500MB")
        }
        return UInt64(bytes)
    }
}
