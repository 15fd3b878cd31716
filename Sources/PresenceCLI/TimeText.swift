import PresenceCore

/// Reads a point in time given on the command line: `2026-11-22T10:30:00Z`, `2026-11-22 10:30`,
/// `2026-11-22T10:30:00.250+01:00` or a date alone (`2026-11-22`, its midnight). Without an
/// offset the time is UTC, as every time presencectl prints.
public enum TimeText {
    /// Epoch milliseconds of `text`; a `ValueError` naming `what` and the text when it is not a time.
    public static func milliseconds(_ text: String, what: String) throws -> Int64 {
        guard let value = parse(Array(text.utf8)) else {
            throw ValueError("\(what) '\(text)' is not valid: expected a date or time such as 2026-11-22 or 2026-11-22T10:30:00Z (UTC unless an offset such as +01:00 is given)")
        }
        return value
    }

    /// Epoch milliseconds of a date alone (`2026-11-22`, midnight UTC).
    public static func day(_ text: String, what: String) throws -> Int64 {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, let value = parse(bytes) else {
            throw ValueError("\(what) '\(text)' is not valid: expected a date such as 2026-11-22 (a UTC day)")
        }
        return value
    }

    /// The UTC date of a time, `2026-11-22`.
    public static func date(_ milliseconds: Int64) -> String {
        String(Timestamps.iso8601(milliseconds).prefix(10))
    }

    private static func parse(_ bytes: [UInt8]) -> Int64? {
        var reader = Reader(bytes: bytes)
        guard let year = reader.digits(4), reader.take("-"), let month = reader.digits(2), reader.take("-"), let day = reader.digits(2),
              (1 ... 12).contains(month), (1 ... CivilDate.daysIn(month: Int64(month), year: Int64(year))).contains(Int64(day)) else { return nil }
        var milliseconds = CivilDate.days(year: Int64(year), month: Int64(month), day: Int64(day)) * 86_400_000
        if reader.atEnd { return milliseconds }
        guard reader.take("T") || reader.take(" "), let hour = reader.digits(2), reader.take(":"), let minute = reader.digits(2),
              hour < 24, minute < 60 else { return nil }
        milliseconds += Int64(hour * 3_600_000 + minute * 60_000)
        if reader.take(":") {
            guard let second = reader.digits(2), second < 60 else { return nil }
            milliseconds += Int64(second * 1000)
            if reader.take(".") {
                guard let (fraction, count) = reader.fraction() else { return nil }
                milliseconds += Int64(fraction) * 1000 / Int64(pow10(count))
            }
        }
        if reader.atEnd || (reader.take("Z") && reader.atEnd) { return milliseconds }
        let sign: Int64
        if reader.take("+") { sign = 1 } else if reader.take("-") { sign = -1 } else { return nil }
        guard let offsetHours = reader.digits(2), offsetHours < 24 else { return nil }
        _ = reader.take(":")
        guard let offsetMinutes = reader.digits(2), offsetMinutes < 60, reader.atEnd else { return nil }
        return milliseconds - sign * Int64(offsetHours * 3_600_000 + offsetMinutes * 60_000)
    }

    private static func pow10(_ count: Int) -> Int {
        (0 ..< count).reduce(1) { value, _ in value * 10 }
    }

    /// Walks the bytes of a time, one expected piece at a time.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ character: Character) -> Bool {
            guard index < bytes.count, let ascii = character.asciiValue, bytes[index] == ascii else { return false }
            index += 1
            return true
        }

        /// Exactly `count` decimal digits.
        mutating func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index ..< index + count] {
                guard (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        /// One to nine digits after a decimal point, and how many there were.
        mutating func fraction() -> (Int, Int)? {
            var count = 0
            while index + count < bytes.count, count < 10, (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(bytes[index + count]) { count += 1 }
            guard (1 ... 9).contains(count), let value = digits(count) else { return nil }
            return (value, count)
        }
    }
}
