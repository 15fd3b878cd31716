import PresenceCore
import PresencePostgres

extension PostgresConnection {
    /// The whole registry as it is now.
    public func loadRegistry() throws -> Registry {
        let venues = try query("SELECT key, name FROM presence.venues").rows.map { row in
            Registry.Venue(key: row.string(0) ?? "", name: row.string(1))
        }
        let zones = try query("SELECT key, venue_key, name, parent_key FROM presence.zones").rows.map { row in
            Registry.Zone(key: row.string(0) ?? "", venue: row.string(1), name: row.string(2), parent: row.string(3))
        }
        var neighbours: [String: [String]] = [:]
        for row in try query("SELECT beacon_key, neighbour_key FROM presence.beacon_neighbours ORDER BY 1, 2").rows {
            guard let beacon = row.string(0), let neighbour = row.string(1) else { continue }
            neighbours[beacon, default: []].append(neighbour)
            neighbours[neighbour, default: []].append(beacon)
        }
        let beacons = try query("""
            SELECT key, venue_key, name, identity, x, y, floor, radius, tx, hello, goodbye, switch_margin, switch_dwell_ms, absence_timeout_ms,
                   zone_key
            FROM presence.beacons
            """).rows.map { row in
            let key = row.string(0) ?? ""
            return Registry.Beacon(
                key: key, venue: row.string(1), name: row.string(2), identity: row.string(3), x: try row.double(4), y: try row.double(5),
                floor: try row.int(6), radius: try row.double(7), tx: try row.int(8), hello: row.string(9), goodbye: row.string(10),
                switchMargin: try row.double(11), switchDwell: try row.int(12).map(Int64.init), absenceTimeout: try row.int(13).map(Int64.init),
                nextTo: (neighbours[key] ?? []).sorted(), zone: row.string(14))
        }
        let nodes = try query("SELECT key, venue_key, beacon_key, x, y, floor, rssi_offset, pinned FROM presence.nodes").rows.map { row in
            Registry.Node(key: row.string(0) ?? "", venue: row.string(1), beacon: row.string(2), x: try row.double(3), y: try row.double(4),
                          floor: try row.int(5), rssiOffset: try row.double(6) ?? 0, pinned: try row.bool(7) ?? false)
        }
        let users = try query("""
            SELECT key, name, (EXTRACT(EPOCH FROM incognito_until) * 1000)::bigint FROM presence.users
            """).rows.map { row in
            Registry.User(key: row.string(0) ?? "", name: row.string(1), incognitoUntil: try row.int(2).map(Int64.init))
        }
        let devices = try query("SELECT identity, user_key, name, tx FROM presence.devices").rows.map { row in
            Registry.Device(identity: row.string(0) ?? "", user: row.string(1) ?? "", name: row.string(2), tx: try row.int(3))
        }
        var registry = Registry(venues: venues, zones: zones, beacons: beacons, nodes: nodes, users: users, devices: devices)
        registry.erasures = try query("SELECT COALESCE(max(id), 0) FROM presence.erasures").rows.first?.int(0).map(Int64.init) ?? 0
        registry.shards = try query("SELECT shards FROM presence.settings").rows.first?.int(0).flatMap { try? Shards(count: $0) } ?? .one
        return registry
    }

    /// Sets the venue's shard count (`presencectl shards --set`); the aggregators hear of it as of
    /// a registry change and publish it to the nodes.
    public func setShards(_ shards: Shards) throws {
        _ = try query("UPDATE presence.settings SET shards = $1, updated_at = now()", [shards.count])
    }

    // MARK: Adding and updating (fields left nil keep their current value)

    public func upsertVenue(key: Slug, name: String?) throws {
        _ = try query("""
            INSERT INTO presence.venues (key, name) VALUES ($1, $2)
            ON CONFLICT (key) DO UPDATE SET name = COALESCE(EXCLUDED.name, venues.name), updated_at = now()
            """, [key.value, name])
    }

    /// Adds or updates a zone (nil fields keep their value). A parent that would put the zone
    /// inside itself is refused.
    public func upsertZone(_ zone: Registry.Zone) throws {
        try transaction { db in try db.writeZone(zone) }
    }

    /// `upsertZone` inside the caller's transaction.
    func writeZone(_ zone: Registry.Zone) throws {
        if let venue = zone.venue { try requireExisting("venue", venue, in: "presence.venues") }
        if let parent = zone.parent {
            try requireExisting("zone", parent, in: "presence.zones")
            let loops = try query("""
                WITH RECURSIVE up (key, depth) AS (
                    SELECT $2::text, 0
                    UNION ALL
                    SELECT z.parent_key, up.depth + 1 FROM presence.zones z JOIN up ON z.key = up.key
                    WHERE z.parent_key IS NOT NULL AND up.depth < 1000
                )
                SELECT 1 FROM up WHERE key = $1 LIMIT 1
                """, [zone.key, parent]).rows
            if !loops.isEmpty {
                throw ValueError("--parent '\(parent)' is not valid: zone '\(parent)' lies inside '\(zone.key)', and a zone cannot lie inside itself")
            }
        }
        _ = try query("""
            INSERT INTO presence.zones (key, venue_key, name, parent_key) VALUES ($1, $2, $3, $4)
            ON CONFLICT (key) DO UPDATE SET
                venue_key = COALESCE(EXCLUDED.venue_key, zones.venue_key),
                name = COALESCE(EXCLUDED.name, zones.name),
                parent_key = COALESCE(EXCLUDED.parent_key, zones.parent_key),
                updated_at = now()
            """, [zone.key, zone.venue, zone.name, zone.parent])
    }

    /// Adds or updates a beacon (nil fields keep their value; `clearPolicy` makes its margin,
    /// dwell and timeout follow the aggregator's flags again), and adds and removes neighbours.
    public func upsertBeacon(_ beacon: Registry.Beacon, clearPolicy: Bool = false, addNeighbours: [String] = [],
                             removeNeighbours: [String] = []) throws {
        try transaction { db in
            try db.writeBeacon(beacon, clearPolicy: clearPolicy, addNeighbours: addNeighbours, removeNeighbours: removeNeighbours)
        }
    }

    /// `upsertBeacon` inside the caller's transaction.
    func writeBeacon(_ beacon: Registry.Beacon, clearPolicy: Bool, addNeighbours: [String], removeNeighbours: [String]) throws {
        if let venue = beacon.venue { try requireExisting("venue", venue, in: "presence.venues") }
        if let zone = beacon.zone { try requireExisting("zone", zone, in: "presence.zones") }
        if let identity = beacon.identity {
            let owner = try query("SELECT key FROM presence.beacons WHERE identity = $1 AND key <> $2", [identity, beacon.key]).rows.first
            if let other = owner?.string(0) {
                throw ValueError("identity '\(identity)' already belongs to beacon '\(other)': remove it there first")
            }
        }
        _ = try query("""
            INSERT INTO presence.beacons (key, venue_key, name, identity, x, y, floor, radius, tx, hello, goodbye,
                                          switch_margin, switch_dwell_ms, absence_timeout_ms, zone_key)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $16)
            ON CONFLICT (key) DO UPDATE SET
                venue_key = COALESCE(EXCLUDED.venue_key, beacons.venue_key),
                name = COALESCE(EXCLUDED.name, beacons.name),
                identity = COALESCE(EXCLUDED.identity, beacons.identity),
                x = COALESCE(EXCLUDED.x, beacons.x),
                y = COALESCE(EXCLUDED.y, beacons.y),
                floor = COALESCE(EXCLUDED.floor, beacons.floor),
                radius = COALESCE(EXCLUDED.radius, beacons.radius),
                tx = COALESCE(EXCLUDED.tx, beacons.tx),
                hello = COALESCE(EXCLUDED.hello, beacons.hello),
                goodbye = COALESCE(EXCLUDED.goodbye, beacons.goodbye),
                switch_margin = CASE WHEN $15::boolean THEN NULL ELSE COALESCE(EXCLUDED.switch_margin, beacons.switch_margin) END,
                switch_dwell_ms = CASE WHEN $15::boolean THEN NULL ELSE COALESCE(EXCLUDED.switch_dwell_ms, beacons.switch_dwell_ms) END,
                absence_timeout_ms = CASE WHEN $15::boolean THEN NULL ELSE COALESCE(EXCLUDED.absence_timeout_ms, beacons.absence_timeout_ms) END,
                zone_key = COALESCE(EXCLUDED.zone_key, beacons.zone_key),
                updated_at = now()
            """, [beacon.key, beacon.venue, beacon.name, beacon.identity, beacon.x, beacon.y, beacon.floor, beacon.radius,
                  beacon.tx, beacon.hello, beacon.goodbye, beacon.switchMargin, beacon.switchDwell, beacon.absenceTimeout, clearPolicy, beacon.zone])
        for neighbour in addNeighbours {
            guard neighbour != beacon.key else { throw ValueError("--next-to '\(neighbour)' is not valid: a beacon is not its own neighbour") }
            try requireExisting("beacon", neighbour, in: "presence.beacons")
            _ = try query("""
                INSERT INTO presence.beacon_neighbours (beacon_key, neighbour_key) VALUES (LEAST($1, $2), GREATEST($1, $2))
                ON CONFLICT DO NOTHING
                """, [beacon.key, neighbour])
        }
        for neighbour in removeNeighbours {
            _ = try query("""
                DELETE FROM presence.beacon_neighbours WHERE beacon_key = LEAST($1, $2) AND neighbour_key = GREATEST($1, $2)
                """, [beacon.key, neighbour])
        }
    }

    /// Adds or updates a node; `rssiOffset` nil keeps the current offset (0 for a new node), a
    /// value pins it (self-calibration leaves the node alone).
    public func upsertNode(_ node: Registry.Node, rssiOffset: Double?) throws {
        try transaction { db in try db.writeNode(node, rssiOffset: rssiOffset) }
    }

    /// `upsertNode` inside the caller's transaction.
    func writeNode(_ node: Registry.Node, rssiOffset: Double?) throws {
        if let venue = node.venue { try requireExisting("venue", venue, in: "presence.venues") }
        if let beacon = node.beacon { try requireExisting("beacon", beacon, in: "presence.beacons") }
        _ = try query("""
            INSERT INTO presence.nodes (key, venue_key, beacon_key, x, y, floor, rssi_offset, pinned)
            VALUES ($1, $2, $3, $4, $5, $6, COALESCE($7::double precision, 0), $7::double precision IS NOT NULL)
            ON CONFLICT (key) DO UPDATE SET
                venue_key = COALESCE(EXCLUDED.venue_key, nodes.venue_key),
                beacon_key = COALESCE(EXCLUDED.beacon_key, nodes.beacon_key),
                x = COALESCE(EXCLUDED.x, nodes.x),
                y = COALESCE(EXCLUDED.y, nodes.y),
                floor = COALESCE(EXCLUDED.floor, nodes.floor),
                rssi_offset = COALESCE($7::double precision, nodes.rssi_offset),
                pinned = nodes.pinned OR $7::double precision IS NOT NULL,
                updated_at = now()
            """, [node.key, node.venue, node.beacon, node.x, node.y, node.floor, rssiOffset])
    }

    public func upsertUser(key: Slug, name: String?) throws {
        _ = try query("""
            INSERT INTO presence.users (key, name) VALUES ($1, $2)
            ON CONFLICT (key) DO UPDATE SET name = COALESCE(EXCLUDED.name, users.name), updated_at = now()
            """, [key.value, name])
    }

    public func upsertDevice(_ device: Registry.Device) throws {
        try transaction { db in try db.writeDevice(device) }
    }

    /// `upsertDevice` inside the caller's transaction.
    func writeDevice(_ device: Registry.Device) throws {
        try requireExisting("user", device.user, in: "presence.users")
        _ = try query("""
            INSERT INTO presence.devices (identity, user_key, name, tx) VALUES ($1, $2, $3, $4)
            ON CONFLICT (identity) DO UPDATE SET
                user_key = EXCLUDED.user_key,
                name = COALESCE(EXCLUDED.name, devices.name),
                tx = COALESCE(EXCLUDED.tx, devices.tx),
                updated_at = now()
            """, [device.identity, device.user, device.name, device.tx])
    }

    /// Makes `user` incognito for `milliseconds` from now (database time), or ends it when nil.
    /// Returns until when (ms since the epoch), or nil.
    @discardableResult
    public func setIncognito(user: Slug, for milliseconds: Int64?) throws -> Int64? {
        try requireExisting("user", user.value, in: "presence.users")
        let row = try query("""
            UPDATE presence.users
            SET incognito_until = CASE WHEN $2::bigint IS NULL THEN NULL ELSE now() + $2::bigint * INTERVAL '1 millisecond' END,
                updated_at = now()
            WHERE key = $1
            RETURNING (EXTRACT(EPOCH FROM incognito_until) * 1000)::bigint
            """, [user.value, milliseconds.map { Int($0) }]).rows.first
        return try row?.int(0).map(Int64.init)
    }

    // MARK: Removing

    public func removeVenue(_ key: Slug) throws {
        try transaction { db in
            try db.requireExisting("venue", key.value, in: "presence.venues")
            let users = try db.query("""
                SELECT (SELECT count(*) FROM presence.beacons WHERE venue_key = $1) + (SELECT count(*) FROM presence.nodes WHERE venue_key = $1)
                """, [key.value]).rows.first
            if let count = try users?.int(0), count > 0 {
                throw ValueError("venue '\(key.value)' still has \(count) beacons or nodes: remove them or move them to another venue first")
            }
            _ = try db.query("DELETE FROM presence.venues WHERE key = $1", [key.value])
        }
    }

    /// Removes a zone: the beacons and zones directly inside it lie in no zone after.
    public func removeZone(_ key: Slug) throws {
        try remove("zone", key.value, from: "presence.zones", column: "key")
    }

    public func removeBeacon(_ key: Slug) throws {
        try remove("beacon", key.value, from: "presence.beacons", column: "key")
    }

    public func removeNode(_ key: Slug) throws {
        try remove("node", key.value, from: "presence.nodes", column: "key")
    }

    /// Removes a user and their devices; their history stays (a running aggregator ends their
    /// session with `removed`).
    public func removeUser(_ key: Slug) throws {
        try remove("user", key.value, from: "presence.users", column: "key")
    }

    /// Forgets a user in one transaction: the user, their devices, sessions, events and
    /// notifications, and records an erasure (which says nothing of whom), so that a running
    /// aggregator drops them without a trace. Returns the device identities they had (for the
    /// caller's own clean-up), empty when the registry did not know the user.
    @discardableResult
    public func forgetUser(_ key: Slug) throws -> [String] {
        try transaction { db in
            let devices = try db.query("SELECT identity FROM presence.devices WHERE user_key = $1", [key.value]).rows.compactMap { $0.string(0) }
            for table in ["sessions", "zone_sessions", "events", "notifications"] {
                _ = try db.query("DELETE FROM presence.\(table) WHERE user_key = $1", [key.value])
            }
            _ = try db.query("DELETE FROM presence.users WHERE key = $1", [key.value])
            _ = try db.query("INSERT INTO presence.erasures DEFAULT VALUES")
            return devices
        }
    }

    public func removeDevice(_ identity: Identity) throws {
        try remove("device", identity.text, from: "presence.devices", column: "identity")
    }

    private func remove(_ what: String, _ key: String, from table: String, column: String) throws {
        let deleted = try query("DELETE FROM \(table) WHERE \(column) = $1", [key]).affectedRows
        guard deleted > 0 else { throw ValueError("\(what) '\(key)' does not exist") }
    }

    private func requireExisting(_ what: String, _ key: String, in table: String) throws {
        guard try !query("SELECT 1 FROM \(table) WHERE key = $1", [key]).rows.isEmpty else {
            throw ValueError("\(what) '\(key)' does not exist: add it first with `presencectl \(what) add \(key)`")
        }
    }
}
