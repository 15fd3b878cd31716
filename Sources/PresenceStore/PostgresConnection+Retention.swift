import PresenceCore
import PresencePostgres

/// How long history is kept: closed sessions, and published events and the notifications sent,
/// for so many milliseconds after they ended; nil keeps them for ever.
public struct Retention: Sendable, Equatable {
    public var sessions: Int64?
    public var events: Int64?

    public init(sessions: Int64? = nil, events: Int64? = nil) {
        self.sessions = sessions
        self.events = events
    }

    public var keepsEverything: Bool { sessions == nil && events == nil }
}

/// How many rows a purge deleted.
public struct PurgeReport: Sendable, Equatable {
    public var sessions = 0
    public var events = 0
    public var notifications = 0

    /// Whether nothing was deleted.
    public var isEmpty: Bool { sessions == 0 && events == 0 && notifications == 0 }
}

extension PostgresConnection {
    /// Deletes, in one transaction, what `retention` no longer keeps: sessions closed longer ago
    /// than `retention.sessions`, and events published and notifications sent longer ago than
    /// `retention.events`. Open sessions and events not yet published (the outbox) always stay.
    public func purge(_ retention: Retention) throws -> PurgeReport {
        try transaction { db in
            var report = PurgeReport()
            if let keep = retention.sessions {
                report.sessions = try db.query("""
                    DELETE FROM presence.sessions WHERE exited_at < now() - make_interval(secs => $1::bigint / 1000.0)
                    """, [keep]).affectedRows
            }
            if let keep = retention.events {
                report.events = try db.query("""
                    DELETE FROM presence.events
                    WHERE published_at IS NOT NULL AND at < now() - make_interval(secs => $1::bigint / 1000.0)
                    """, [keep]).affectedRows
                report.notifications = try db.query("""
                    DELETE FROM presence.notifications WHERE sent_at < now() - make_interval(secs => $1::bigint / 1000.0)
                    """, [keep]).affectedRows
            }
            return report
        }
    }
}
