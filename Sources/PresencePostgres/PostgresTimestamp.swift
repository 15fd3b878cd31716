/// Conversions between Unix epoch milliseconds and PostgreSQL's `timestamptz` text, done with
/// integer calendar arithmetic (proleptic Gregorian, as PostgreSQL uses) so no formatter is shared.
enum PostgresTimestamp {
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, or the `... BC` form PostgreSQL reads for years before 1.
    static func text(epochMilliseconds: Int64) -> String {
        let (days, millisOfDay) = floorDivision(epochMilliseconds, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        let hour = millisOfDay / 3_600_000
        let minute = millisOfDay / 60_000 % 60
        let second = millisOfDay / 1000 % 60
        let millisecond = millisOfDay % 1000
        let time = "\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(millisecond, 3))"
        if year <= 0 {
            return "\(pad(1 - year, 4))-\(pad(month, 2))-\(pad(day, 2)) \(time)+00 BC"
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(time)Z"
    }

    /// Parses the ISO output of a `timestamptz` (`2024-05-01 12:30:00.25+00`, `+05:30`, `... BC`);
    /// a value without an offset is taken as UTC. Returns nil for anything else, `infinity` included.
    static func epochMilliseconds(fromText text: String) -> Int64? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.number(minDigits: 4, maxDigits: 9), scanner.skip("-"),
              let month = scanner.number(minDigits: 2, maxDigits: 2), scanner.skip("-"),
              let day = scanner.number(minDigits: 2, maxDigits: 2), scanner.skip(" ") || scanner.skip("T"),
              let hour = scanner.number(minDigits: 2, maxDigits: 2), scanner.skip(":"),
              let minute = scanner.number(minDigits: 2, maxDigits: 2), scanner.skip(":"),
              let second = scanner.number(minDigits: 2, maxDigits: 2),
              (1...12).contains(month), (1...31).contains(day), hour <= 24, minute < 60, second <= 60
        else { return nil }
        var millisecond: Int64 = 0
        if scanner.skip(".") {
            guard let run = scanner.digits(), !run.isEmpty else { return nil }
            let digits = Array(run)
            for index in 0..<3 {
                millisecond = millisecond * 10 + (index < digits.count ? Int64(digits[index] - UInt8(ascii: "0")) : 0)
            }
        }
        var offsetSeconds: Int64 = 0
        if let sign = scanner.sign() {
            guard let offsetHours = scanner.number(minDigits: 2, maxDigits: 2) else { return nil }
            var offset = offsetHours * 3600
            if scanner.skip(":") {
                guard let offsetMinutes = scanner.number(minDigits: 2, maxDigits: 2) else { return nil }
                offset += offsetMinutes * 60
                if scanner.skip(":") {
                    guard let offsetSeconds = scanner.number(minDigits: 2, maxDigits: 2) else { return nil }
                    offset += offsetSeconds
                }
            }
            offsetSeconds = sign * offset
        } else if scanner.skip("Z") {
            offsetSeconds = 0
        }
        var era = year
        if scanner.skip(" BC") { era = 1 - year }
        guard scanner.atEnd else { return nil }
        let days = self.days(fromCivil: era, month, day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return seconds * 1000 + millisecond
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (`civil_from_days`).
    static func civil(fromDays count: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = count + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// A cursor over the bytes of one timestamp.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func skip(_ literal: String) -> Bool {
            let expected = Array(literal.utf8)
            guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
                return false
            }
            index += expected.count
            return true
        }

        mutating func digits() -> ArraySlice<UInt8>? {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return bytes[start..<index]
        }

        mutating func number(minDigits: Int, maxDigits: Int) -> Int64? {
            let start = index
            guard let run = digits(), (minDigits...maxDigits).contains(run.count) else {
                index = start
                return nil
            }
            return run.reduce(0) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
        }

        mutating func sign() -> Int64? {
            if skip("+") { return 1 }
            if skip("-") { return -1 }
            return nil
        }
    }
}
