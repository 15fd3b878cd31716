import Foundation

/// Formats epoch milliseconds as ISO 8601 in UTC (`2026-11-22T03:05:23.123Z`) for people.
public enum Timestamps {
    /// The milliseconds are written from the integer, not from a binary fraction of a second
    /// (which printed …35.050 as …35.049).
    public static func iso8601(_ milliseconds: Int64) -> String {
        let (seconds, fraction) = (milliseconds.dividedFloor(by: 1000), milliseconds - milliseconds.dividedFloor(by: 1000) * 1000)
        let whole = Date(timeIntervalSince1970: Double(seconds))
            .formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false).timeZone(separator: .omitted))
        let digits = String(fraction)
        return String(whole.dropLast()) + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }
}

extension Int64 {
    /// The quotient rounded towards minus infinity (`-1 / 1000` is `-1`, not `0`).
    fileprivate func dividedFloor(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
