import PresenceCore
import PresencePostgres

extension PostgresConnection {
    /// How far the aggregator `clientID` had decided when it last saved, if it ever did.
    public func savedClock(clientID: String) throws -> Int64? {
        try query("SELECT (EXTRACT(EPOCH FROM clock) * 1000)::bigint FROM presence.aggregator_clock WHERE client_id = $1",
                  [clientID]).rows.first?.int(0).map(Int64.init)
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

    /// The open zone stays, by user and entry.
    public func openZoneSessions() throws -> [ZoneSession] {
        try query("""
            SELECT user_key, zone_key, device, venue_key, (EXTRACT(EPOCH FROM entered_at) * 1000)::bigint
            FROM presence.zone_sessions WHERE exited_at IS NULL ORDER BY user_key, entered_at, zone_key
            """).rows.map { row in
            ZoneSession(user: row.string(0) ?? "", zone: row.string(1) ?? "", device: row.string(2) ?? "", venue: row.string(3),
                        entered: Int64(try row.int(4) ?? 0))
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
}
