import Logging
import PresenceCore
import PresencePostgres

/// An event recorded in the outbox and not yet acknowledged by the broker.
public struct UnpublishedEvent: Sendable, Equatable {
    public var id: String
    public var user: String
    public var beacon: String
    public var payload: [UInt8]
}

extension PostgresConnection {
    /// Records events and the session changes they mean, all in one transaction: an enter opens
    /// a session, an exit closes the user's open session there. Events already recorded (same id)
    /// are skipped, so recording again after a crash is harmless.
    public func record(_ events: [PresenceEvent], notifications: [PresenceNotification] = [], logger: Logger) throws {
        guard !events.isEmpty || !notifications.isEmpty else { return }
        try transaction { db in
            for notification in notifications {
                try db.query("""
                    INSERT INTO presence.notifications (user_key, beacon_key, kind, message, sent_at)
                    VALUES ($1, $2, $3, $4, to_timestamp($5::bigint / 1000.0))
                    ON CONFLICT (user_key, beacon_key, kind) DO UPDATE SET message = EXCLUDED.message, sent_at = EXCLUDED.sent_at
                    """, [notification.user, notification.beacon, notification.kind.rawValue, notification.message, Int(notification.at)])
            }
            for event in events {
                let inserted = try db.query("""
                    INSERT INTO presence.events (id, kind, user_key, beacon_key, at, payload)
                    VALUES ($1::uuid, $2, $3, $4, to_timestamp($5::bigint / 1000.0), $6)
                    ON CONFLICT (id) DO NOTHING
                    """, [event.id, event.kind.rawValue, event.user, event.beacon, Int(event.at), String(decoding: event.encoded(), as: UTF8.self)]).affectedRows
                guard inserted == 1 else { continue }
                switch event.kind {
                case .enter:
                    let stale = try db.query("""
                        UPDATE presence.sessions
                        SET exited_at = GREATEST(to_timestamp($2::bigint / 1000.0), entered_at), exit_reason = 'removed'
                        WHERE user_key = $1 AND exited_at IS NULL
                        """, [event.user, Int(event.at)]).affectedRows
                    if stale > 0 {
                        logger.warning("closed a session the engine did not know about", metadata: ["user": "\(event.user)"])
                    }
                    _ = try db.query("""
                        INSERT INTO presence.sessions (user_key, beacon_key, venue_key, device, entered_at, last_seen_at, enter_event)
                        VALUES ($1, $2, $3, $4, to_timestamp($5::bigint / 1000.0), to_timestamp($5::bigint / 1000.0), $6::uuid)
                        """, [event.user, event.beacon, event.venue, event.device, Int(event.at), event.id])
                case .exit:
                    let closed = try db.query("""
                        UPDATE presence.sessions
                        SET exited_at = GREATEST(to_timestamp($3::bigint / 1000.0), entered_at), exit_reason = $4, exit_event = $5::uuid
                        WHERE user_key = $1 AND beacon_key = $2 AND exited_at IS NULL
                        """, [event.user, event.beacon, Int(event.at), event.reason?.rawValue ?? PresenceEvent.ExitReason.timeout.rawValue, event.id]).affectedRows
                    if closed == 0 {
                        logger.warning("an exit found no open session", metadata: ["user": "\(event.user)", "beacon": "\(event.beacon)"])
                    }
                }
            }
        }
    }

    /// Saves how far the aggregator `clientID` has decided, and the last-seen time of open
    /// sessions (never moving it backwards), in one transaction.
    public func saveProgress(clientID: String, clock: Int64, lastSeen: [(user: String, time: Int64)]) throws {
        try transaction { db in
            try db.query("""
                INSERT INTO presence.aggregator_clock (client_id, clock) VALUES ($1, to_timestamp($2::bigint / 1000.0))
                ON CONFLICT (client_id) DO UPDATE SET clock = EXCLUDED.clock, updated_at = now()
                """, [clientID, Int(clock)])
            try db.touch(lastSeen: lastSeen)
        }
    }

    /// How far the aggregator `clientID` had decided when it last saved, if it ever did.
    public func savedClock(clientID: String) throws -> Int64? {
        try query("SELECT (EXTRACT(EPOCH FROM clock) * 1000)::bigint FROM presence.aggregator_clock WHERE client_id = $1",
                  [clientID]).rows.first?.int(0).map(Int64.init)
    }

    /// Keeps the last-seen time of open sessions fresh (never moving it backwards).
    public func touch(lastSeen: [(user: String, time: Int64)]) throws {
        guard !lastSeen.isEmpty else { return }
        let users = "{" + lastSeen.map { "\"\($0.user)\"" }.joined(separator: ",") + "}"
        let times = "{" + lastSeen.map { String($0.time) }.joined(separator: ",") + "}"
        _ = try query("""
            UPDATE presence.sessions s
            SET last_seen_at = to_timestamp(v.t / 1000.0)
            FROM unnest($1::text[], $2::bigint[]) AS v (u, t)
            WHERE s.user_key = v.u AND s.exited_at IS NULL AND s.last_seen_at < to_timestamp(v.t / 1000.0)
            """, [users, times])
    }

    /// The sessions open now, to resume after a restart.
    public func openSessions() throws -> [Presence] {
        try query("""
            SELECT user_key, device, beacon_key, venue_key,
                   (EXTRACT(EPOCH FROM entered_at) * 1000)::bigint, (EXTRACT(EPOCH FROM last_seen_at) * 1000)::bigint
            FROM presence.sessions WHERE exited_at IS NULL ORDER BY user_key
            """).rows.map { row in
            Presence(user: row.string(0) ?? "", device: row.string(1) ?? "", beacon: row.string(2) ?? "", venue: row.string(3),
                     entered: Int64(try row.int(4) ?? 0), lastSeen: Int64(try row.int(5) ?? 0))
        }
    }

    /// The hellos and goodbyes sent within the last `milliseconds`, for the cool-down.
    public func recentNotifications(within milliseconds: Int64) throws -> [PresenceNotification] {
        try query("""
            SELECT user_key, beacon_key, kind, message, (EXTRACT(EPOCH FROM sent_at) * 1000)::bigint FROM presence.notifications
            WHERE sent_at > now() - $1::bigint * INTERVAL '1 millisecond'
            """, [Int(milliseconds)]).rows.compactMap { row in
            guard let kind = row.string(2).flatMap(PresenceNotification.Kind.init(rawValue:)) else { return nil }
            return PresenceNotification(user: row.string(0) ?? "", beacon: row.string(1) ?? "", kind: kind, message: row.string(3) ?? "",
                                        at: Int64(try row.int(4) ?? 0))
        }
    }

    /// Events recorded but not acknowledged by the broker, oldest first.
    public func unpublishedEvents(limit: Int = 10_000) throws -> [UnpublishedEvent] {
        try query("""
            SELECT id::text, user_key, beacon_key, payload FROM presence.events
            WHERE published_at IS NULL ORDER BY seq LIMIT $1
            """, [limit]).rows.map { row in
            UnpublishedEvent(id: row.string(0) ?? "", user: row.string(1) ?? "", beacon: row.string(2) ?? "", payload: Array((row.string(3) ?? "").utf8))
        }
    }

    /// Marks events as acknowledged by the broker.
    public func markPublished(_ ids: [String]) throws {
        guard !ids.isEmpty else { return }
        _ = try query("UPDATE presence.events SET published_at = now() WHERE id = ANY($1::uuid[]) AND published_at IS NULL",
                      ["{" + ids.joined(separator: ",") + "}"])
    }
}
