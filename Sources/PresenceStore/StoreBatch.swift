import PresenceCore
import PresencePostgres

/// What the aggregator stores in one transaction: events with the session changes they mean,
/// the notifications sent, progress (the decided-up-to clock, last sightings of present users),
/// and events the broker has acknowledged since.
public struct StoreBatch: Sendable {
    /// The messages of the events, in order: each payload (the event's JSON, as published) goes to
    /// the database as it is, and the statements read the columns they need from it.
    public var events: [OutboundMessage] = []
    /// The messages of zone events, in order: enters open zone sessions, exits close them.
    public var zoneEvents: [OutboundMessage] = []
    public var notifications: [PresenceNotification] = []
    /// The aggregator's client id and the clock it has decided up to, when progress is saved.
    public var clock: (clientID: String, time: Int64)?
    /// Last sightings of present users (never moving one backwards).
    public var lastSeen: [OutboundRecord.LastSeen] = []
    /// Ids of events the broker acknowledged.
    public var published: [String] = []
    /// How far the aggregator's journal is applied once this batch is.
    public var journal: JournalPosition?
    /// Users forgotten: their sessions, events and notifications are deleted last, so that nothing
    /// the batch stored about them stays.
    public var erasedUsers: [String] = []

    public init() {}

    public var isEmpty: Bool {
        events.isEmpty && zoneEvents.isEmpty && notifications.isEmpty && clock == nil && lastSeen.isEmpty && published.isEmpty && journal == nil && erasedUsers.isEmpty
    }
}

/// A position in an aggregator's journal: which aggregator, which journal, and how far.
public struct JournalPosition: Sendable, Equatable {
    public var clientID: String
    public var journal: String
    public var position: UInt64

    public init(clientID: String, journal: String, position: UInt64) {
        self.clientID = clientID
        self.journal = journal
        self.position = position
    }
}

/// What storing a batch found that the engine did not expect.
public struct StoreBatchReport: Sendable, Equatable {
    /// Events skipped because they were stored before (same id).
    public var alreadyStored = 0
    /// Users whose open session an enter found and closed (`removed`).
    public var staleSessionsClosed: [String] = []
    /// Exits that found no open session to close, as "user at beacon".
    public var exitsWithoutSession: [String] = []
}

extension PostgresConnection {
    /// Stores `batch` in one transaction of a few set-based statements, pipelined: the events not
    /// stored before (by id), their session changes in order, notifications, progress and
    /// acknowledgements. Session changes go in generations, the n-th event of every user in the
    /// n-th, so that each statement touches a user once and a user's exit comes before their next
    /// enter. Storing the same batch again changes nothing.
    @discardableResult
    public func store(_ batch: StoreBatch) throws -> StoreBatchReport {
        var report = StoreBatchReport()
        guard !batch.isEmpty else { return report }
        var known: Set<String> = []
        if !batch.events.isEmpty {
            known = Set(try query("""
                SELECT id::text FROM presence.events WHERE id IN (SELECT (e->>'id')::uuid FROM json_array_elements($1::json) AS v (e))
                """, [PostgresJSONArray(batch.events.map(\.payload))]).rows.compactMap { $0.string(0) })
            report.alreadyStored = known.count
        }
        let events = batch.events.filter { message in message.event.map { known.insert($0.id).inserted } ?? false }
        var statements: [(sql: String, parameters: [PostgresParameter])] = []
        if !batch.notifications.isEmpty { statements.append(Self.notificationsStatement(batch.notifications)) }
        if !events.isEmpty { statements.append(Self.eventsStatement(events)) }
        /// Statements whose returned users say something: the stale-closing ones and the exits.
        var watched: [(index: Int, expected: [String], exits: Bool)] = []
        for generation in Self.generations(events) {
            let exits = generation.filter { $0.event?.kind == .exit }
            let enters = generation.filter { $0.event?.kind == .enter }
            if !exits.isEmpty {
                watched.append((statements.count, exits.compactMap(\.event).map { "\($0.user) at \($0.beacon)" }, true))
                statements.append(Self.exitsStatement(exits))
            }
            if !enters.isEmpty {
                watched.append((statements.count, [], false))
                statements.append(Self.staleSessionsStatement(enters))
                statements.append(Self.sessionsStatement(enters))
            }
        }
        statements += Self.zoneSessionStatements(batch.zoneEvents)
        if let clock = batch.clock {
            statements.append(("""
                INSERT INTO presence.aggregator_clock (client_id, clock) VALUES ($1, to_timestamp($2::bigint / 1000.0))
                ON CONFLICT (client_id) DO UPDATE SET clock = EXCLUDED.clock, updated_at = now()
                """, [clock.clientID, Int(clock.time)]))
        }
        if !batch.lastSeen.isEmpty {
            statements.append(("""
                UPDATE presence.sessions s
                SET last_seen_at = to_timestamp(v.t / 1000.0)
                FROM unnest($1::text[], $2::bigint[]) AS v (u, t)
                WHERE s.user_key = v.u AND s.exited_at IS NULL AND s.last_seen_at < to_timestamp(v.t / 1000.0)
                """, [PostgresArray(batch.lastSeen.map(\.user)), PostgresArray(batch.lastSeen.map(\.time))]))
        }
        if !batch.published.isEmpty {
            statements.append(("UPDATE presence.events SET published_at = now() WHERE id = ANY($1::uuid[]) AND published_at IS NULL",
                               [PostgresArray(batch.published)]))
        }
        if let journal = batch.journal {
            statements.append(("""
                INSERT INTO presence.aggregator_journal (client_id, journal_id, position) VALUES ($1, $2, $3)
                ON CONFLICT (client_id) DO UPDATE SET journal_id = EXCLUDED.journal_id, position = EXCLUDED.position, updated_at = now()
                """, [journal.clientID, journal.journal, Int64(clamping: journal.position)]))
        }
        if !batch.erasedUsers.isEmpty {
            let users = PostgresArray(batch.erasedUsers)
            for table in ["sessions", "zone_sessions", "events", "notifications"] {
                statements.append(("DELETE FROM presence.\(table) WHERE user_key = ANY($1::text[])", [users]))
            }
        }
        guard !statements.isEmpty else { return report }
        let results = try pipeline(statements)
        for (index, expected, exits) in watched {
            let returned = results[index].rows.compactMap { $0.string(0) }
            if exits {
                let closed = Set(returned)
                report.exitsWithoutSession += expected.filter { !closed.contains($0) }
            } else {
                report.staleSessionsClosed += returned
            }
        }
        return report
    }

    /// How far the aggregator `clientID` had applied its journal, and in which journal.
    public func journalPosition(clientID: String) throws -> JournalPosition? {
        guard let row = try query("SELECT journal_id, position FROM presence.aggregator_journal WHERE client_id = $1", [clientID]).rows.first,
              let journal = row.string(0), let position = try row.int(1) else { return nil }
        return JournalPosition(clientID: clientID, journal: journal, position: UInt64(max(0, position)))
    }

    /// `events` in generations: the first event of every user, then the second, and so on.
    static func generations(_ events: [OutboundMessage]) -> [[OutboundMessage]] {
        var generations: [[OutboundMessage]] = []
        var seen: [String: Int] = [:]
        for message in events {
            guard let user = message.event?.user else { continue }
            let generation = seen[user, default: 0]
            seen[user] = generation + 1
            if generation == generations.count { generations.append([]) }
            generations[generation].append(message)
        }
        return generations
    }

    /// Zone sessions opened by enters (once per enter event), then closed by exits: an exit closes
    /// the open stay of its user in its zone that began when the exit says it did, so storing
    /// the same zone events again, or an enter and its exit together, comes out the same.
    private static func zoneSessionStatements(_ events: [OutboundMessage]) -> [(sql: String, parameters: [PostgresParameter])] {
        let enters = events.filter { $0.zoneEvent?.kind == .enter }
        let exits = events.filter { $0.zoneEvent?.kind == .exit }
        var statements: [(sql: String, parameters: [PostgresParameter])] = []
        if !enters.isEmpty {
            statements.append(("""
                INSERT INTO presence.zone_sessions (user_key, zone_key, venue_key, device, entered_at, enter_event)
                SELECT e->>'user', e->>'zone', e->>'venue', e->>'device', to_timestamp((e->>'at')::bigint / 1000.0), (e->>'id')::uuid
                FROM json_array_elements($1::json) WITH ORDINALITY AS v (e, n)
                ORDER BY n
                ON CONFLICT (enter_event) DO NOTHING
                """, [PostgresJSONArray(enters.map(\.payload))]))
        }
        if !exits.isEmpty {
            statements.append(("""
                UPDATE presence.zone_sessions s
                SET exited_at = GREATEST(to_timestamp((e->>'at')::bigint / 1000.0), s.entered_at),
                    exit_reason = COALESCE(e->>'reason', 'timeout'), exit_event = (e->>'id')::uuid
                FROM json_array_elements($1::json) AS v (e)
                WHERE s.user_key = e->>'user' AND s.zone_key = e->>'zone' AND s.exited_at IS NULL
                  AND abs(EXTRACT(EPOCH FROM s.entered_at) * 1000 - (e->>'entered')::bigint) < 0.5
                """, [PostgresJSONArray(exits.map(\.payload))]))
        }
        return statements
    }

    private static func notificationsStatement(_ notifications: [PresenceNotification]) -> (sql: String, parameters: [PostgresParameter]) {
        // The latest of each (user, beacon, kind) wins: ON CONFLICT may not touch a row twice.
        var latest: [String: PresenceNotification] = [:]
        for notification in notifications { latest["\(notification.user) \(notification.beacon) \(notification.kind.rawValue)"] = notification }
        let rows = latest.values.sorted { $0.at < $1.at }
        return ("""
            INSERT INTO presence.notifications (user_key, beacon_key, kind, message, sent_at)
            SELECT u, b, k, m, to_timestamp(t / 1000.0) FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) AS v (u, b, k, m, t)
            ON CONFLICT (user_key, beacon_key, kind) DO UPDATE SET message = EXCLUDED.message, sent_at = EXCLUDED.sent_at
            """, [PostgresArray(rows.map(\.user)), PostgresArray(rows.map(\.beacon)), PostgresArray(rows.map(\.kind.rawValue)),
                  PostgresArray(rows.map(\.message)), PostgresArray(rows.map(\.at))])
    }

    private static func eventsStatement(_ events: [OutboundMessage]) -> (sql: String, parameters: [PostgresParameter]) {
        ("""
            INSERT INTO presence.events (id, kind, user_key, beacon_key, at, payload)
            SELECT (e->>'id')::uuid, e->>'event', e->>'user', e->>'beacon', to_timestamp((e->>'at')::bigint / 1000.0), e::text
            FROM json_array_elements($1::json) WITH ORDINALITY AS v (e, n)
            ORDER BY n
            ON CONFLICT DO NOTHING
            """, [PostgresJSONArray(events.map(\.payload))])
    }

    private static func exitsStatement(_ exits: [OutboundMessage]) -> (sql: String, parameters: [PostgresParameter]) {
        ("""
            UPDATE presence.sessions s
            SET exited_at = GREATEST(to_timestamp((e->>'at')::bigint / 1000.0), s.entered_at),
                exit_reason = COALESCE(e->>'reason', 'timeout'), exit_event = (e->>'id')::uuid
            FROM json_array_elements($1::json) AS v (e)
            WHERE s.user_key = e->>'user' AND s.beacon_key = e->>'beacon' AND s.exited_at IS NULL
            RETURNING s.user_key || ' at ' || s.beacon_key
            """, [PostgresJSONArray(exits.map(\.payload))])
    }

    /// Closes (`removed`) the open sessions of users about to enter: the engine did not know them.
    private static func staleSessionsStatement(_ enters: [OutboundMessage]) -> (sql: String, parameters: [PostgresParameter]) {
        ("""
            UPDATE presence.sessions s
            SET exited_at = GREATEST(to_timestamp((e->>'at')::bigint / 1000.0), s.entered_at), exit_reason = 'removed'
            FROM json_array_elements($1::json) AS v (e)
            WHERE s.user_key = e->>'user' AND s.exited_at IS NULL
            RETURNING s.user_key
            """, [PostgresJSONArray(enters.map(\.payload))])
    }

    private static func sessionsStatement(_ enters: [OutboundMessage]) -> (sql: String, parameters: [PostgresParameter]) {
        ("""
            INSERT INTO presence.sessions (user_key, beacon_key, venue_key, device, entered_at, last_seen_at, enter_event)
            SELECT e->>'user', e->>'beacon', e->>'venue', e->>'device', to_timestamp((e->>'at')::bigint / 1000.0),
                   to_timestamp((e->>'at')::bigint / 1000.0), (e->>'id')::uuid
            FROM json_array_elements($1::json) AS v (e)
            """, [PostgresJSONArray(enters.map(\.payload))])
    }
}
