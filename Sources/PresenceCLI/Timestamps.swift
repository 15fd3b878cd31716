import PresenceCore

/// Formats epoch milliseconds as ISO 8601 in UTC (`2026-11-22T03:05:23.123Z`) for people.
public enum Timestamps {
    /// The milliseconds are written from the integer, not from a binary fraction of a second
    /// (which printed …35.050 as …35.049).
    public static func iso8601(_ milliseconds: Int64) -> String {
        ISO8601Text.string(milliseconds: milliseconds)
    }
}
