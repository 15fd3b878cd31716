/// A row of `presence.sessions`, by the events that opened and closed it, or the session that
/// published events make.
struct StoredSession: Hashable, Sendable {
    let user: String
    let beacon: String
    let enterEvent: String
    /// Empty while the session is open.
    let exitEvent: String
    let reason: String

    /// Every row of `presence.sessions` in the database at `url`.
    static func stored(in url: String) throws -> [StoredSession] {
        try TestDatabase.rows(url, """
            SELECT user_key, beacon_key, enter_event, COALESCE(exit_event::text, ''), COALESCE(exit_reason, '')
            FROM presence.sessions ORDER BY entered_at, user_key
            """).map { row in
            let fields = row.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5 else { throw TestSetupError(message: "unexpected session row \(row)") }
            return StoredSession(user: fields[0], beacon: fields[1], enterEvent: fields[2], exitEvent: fields[3], reason: fields[4])
        }
    }

    /// The sessions `events` (in order) make: an enter opens one, the user's next exit closes it.
    static func made(by events: [PublishedEvent]) -> Set<StoredSession> {
        var open: [String: PublishedEvent] = [:]
        var sessions: Set<StoredSession> = []
        for event in events {
            if event.kind == "enter" {
                open[event.user] = event
            } else if let enter = open.removeValue(forKey: event.user) {
                sessions.insert(StoredSession(user: enter.user, beacon: enter.beacon, enterEvent: enter.id, exitEvent: event.id, reason: event.reason))
            }
        }
        for enter in open.values {
            sessions.insert(StoredSession(user: enter.user, beacon: enter.beacon, enterEvent: enter.id, exitEvent: "", reason: ""))
        }
        return sessions
    }
}
