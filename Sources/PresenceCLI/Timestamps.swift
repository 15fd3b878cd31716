import Foundation

/// Formats epoch milliseconds as ISO 8601 in UTC (`2026-11-22T03:05:23.123Z`) for people.
public enum Timestamps {
    public static func iso8601(_ milliseconds: Int64) -> String {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            .formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
