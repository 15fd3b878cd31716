/// Times on the day the report fixtures happen, 2026-01-05 (UTC), and a command's output lines.
enum FixtureDay {
    /// 2026-01-05T00:00:00Z.
    static let start: Int64 = 1_767_571_200_000

    /// Epoch ms of "HH:MM" on 2026-01-05, or `day` days later.
    static func at(_ clock: String, day: Int64 = 0) -> Int64 {
        let parts = clock.split(separator: ":").compactMap { Int64($0) }
        return start + day * 86_400_000 + parts[0] * 3_600_000 + parts[1] * 60_000
    }

    /// The lines of an output (split at LF; a CRLF is one character to Swift, so CSV is read with `RFC4180`).
    static func lines(_ output: String) -> [String] {
        output.split(separator: "\n").map(String.init)
    }
}
