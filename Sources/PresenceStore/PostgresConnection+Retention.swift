import PresenceCore
import PresencePostgres

/// How long history is kept: closed sessions (beacon and zone sessions alike), and published events and the notifications sent,
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

/// How many rows a purge deleted, and how many whole months of them went as partitions.
public struct PurgeReport: Sendable, Equatable {
    public var sessions = 0
    public var zoneSessions = 0
    public var events = 0
    public var notifications = 0
    /// Monthly partitions of sessions and events dropped whole (their rows are counted above).
    public var months = 0

    /// Whether nothing was deleted.
    public var isEmpty: Bool { sessions == 0 && zoneSessions == 0 && events == 0 && notifications == 0 }
}

extension PostgresConnection {
    /// Makes the monthly partitions of sessions and events from this month to `ahead` from now,
    /// and moves rows the default partitions hold into months of their own. Returns how many
    /// partitions were made.
    @discardableResult
    public func maintainHistoryPartitions(ahead: Duration = .seconds(62 * 86_400)) throws -> Int {
        try query("SELECT presence.maintain_history_partitions(make_interval(secs => $1::bigint))",
                  [Int(ahead.components.seconds)]).rows.first?.int(0) ?? 0
    }

    /// Deletes, in one transaction, what `retention` no longer keeps: sessions and zone sessions
    /// closed longer ago than `retention.sessions`, and events published and notifications sent longer ago than
    /// `retention.events`. Open sessions and events not yet published (the outbox) always stay.
    /// History is partitioned by month: the partitions are brought up to date first, months that
    /// ended before the limit are dropped whole, and the rest is deleted row by row.
    public func purge(_ retention: Retention) throws -> PurgeReport {
        try maintainHistoryPartitions()
        return try transaction { db in
            var report = PurgeReport()
            let dropped = try db.query("""
                SELECT parent, row_count FROM presence.drop_history_partitions(
                    now() - make_interval(secs => $1::bigint / 1000.0), now() - make_interval(secs => $2::bigint / 1000.0))
                """, [retention.sessions.map(Int.init), retention.events.map(Int.init)]).rows
            for row in dropped {
                let rows = try row.int(1) ?? 0
                if row.string(0) == "sessions" { report.sessions += rows } else { report.events += rows }
                report.months += 1
            }
            if let keep = retention.sessions {
                report.sessions += try db.query("""
                    DELETE FROM presence.sessions WHERE exited_at < now() - make_interval(secs => $1::bigint / 1000.0)
                    """, [keep]).affectedRows
                report.zoneSessions = try db.query("""
                    DELETE FROM presence.zone_sessions WHERE exited_at < now() - make_interval(secs => $1::bigint / 1000.0)
                    """, [keep]).affectedRows
            }
            if let keep = retention.events {
                report.events += try db.query("""
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
