import Foundation
import Testing
@testable import PresenceCore

/// `ISO8601Text` agrees with Foundation's formatter, to the millisecond written from the integer.
@Suite struct ISO8601TextTests {
    @Test func agreesWithFoundationFromTheEpochPastTheYear2100() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var random = RandomSource(seed: 11)
        let fixed: [Int64] = [0, 951_782_400_000, 951_868_799_999, 4_107_542_400_000, 1_763_774_735_050, -1]
        for milliseconds in fixed + (0 ..< 2000).map({ _ in Int64(random.next() % 4_200_000_000_000) }) {
            let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
            let whole = formatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
            let expected = whole.dropLast(4) + String(format: "%03d", Int(milliseconds - seconds * 1000)) + "Z"
            #expect(ISO8601Text.string(milliseconds: milliseconds) == String(expected), "\(milliseconds)")
        }
        #expect(ISO8601Text.string(milliseconds: 1_763_774_735_050) == "2025-11-22T01:25:35.050Z")
        #expect(ISO8601Text.string(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
    }

    @Test func theCalendarTurnsDaysIntoDatesAndBackAcrossEras() {
        #expect(CivilDate.date(days: 0) == (1970, 1, 1))
        #expect(CivilDate.date(days: -1) == (1969, 12, 31))
        #expect(CivilDate.days(year: 2000, month: 2, day: 29) == 11_016)
        #expect(CivilDate.days(year: 0, month: 1, day: 1) == -719_528, "year 0 (1 BC) counts")
        for days in stride(from: -800_000 as Int64, through: 800_000, by: 997) {
            let date = CivilDate.date(days: days)
            #expect(CivilDate.days(year: date.year, month: date.month, day: date.day) == days, "\(days)")
            #expect((1 ... CivilDate.daysIn(month: date.month, year: date.year)).contains(date.day))
        }
        #expect([1900, 2023, 2024, 2000].map { CivilDate.daysIn(month: 2, year: $0) } == [28, 28, 29, 29])
    }
}
