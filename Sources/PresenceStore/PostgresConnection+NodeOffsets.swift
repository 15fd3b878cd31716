import PresenceCore
import PresencePostgres

extension PostgresConnection {
    /// Sets and pins the RSSI offset (dB to add to every RSSI) of each node in `offsets`, by node
    /// key, in one transaction; nothing changes when one of them is not registered.
    public func setNodeOffsets(_ offsets: [String: Double]) throws {
        let rows = offsets.sorted { $0.key < $1.key }
        try transaction { db in
            let updated = try db.query("""
                UPDATE presence.nodes n SET rssi_offset = v.o, pinned = true, updated_at = now()
                FROM unnest($1::text[], $2::double precision[]) AS v (k, o)
                WHERE n.key = v.k
                RETURNING n.key
                """, [PostgresArray(rows.map(\.key)), PostgresArray(rows.map(\.value))]).rows.compactMap { $0.string(0) }
            if let missing = rows.first(where: { !updated.contains($0.key) }) {
                throw ValueError("node '\(missing.key)' does not exist")
            }
        }
    }

    /// Pins `node` at `offset`, or, when nil, at the offset self-calibration last stored for it.
    /// Returns the offset pinned.
    @discardableResult
    public func pinNode(_ node: Slug, offset: Double?) throws -> Double {
        try transaction { db in
            guard let row = try db.query("""
                SELECT c.offset_db FROM presence.nodes n LEFT JOIN presence.node_calibration c ON c.node_key = n.key WHERE n.key = $1
                """, [node.value]).rows.first else {
                throw ValueError("node '\(node.value)' does not exist")
            }
            guard let pinned = try offset ?? row.double(0) else {
                throw ValueError("node '\(node.value)' has no fitted offset to pin: give --rssi-offset DB, or let `presence-aggregator --self-calibrate` fit it first")
            }
            _ = try db.query("UPDATE presence.nodes SET rssi_offset = $2, pinned = true, updated_at = now() WHERE key = $1", [node.value, pinned])
            return pinned
        }
    }

    /// Unpins `node`: its registered offset goes back to 0 and self-calibration fits it again.
    public func unpinNode(_ node: Slug) throws {
        let updated = try query("UPDATE presence.nodes SET rssi_offset = 0, pinned = false, updated_at = now() WHERE key = $1", [node.value])
        guard updated.affectedRows > 0 else { throw ValueError("node '\(node.value)' does not exist") }
    }

    /// The offsets self-calibration last stored, by node key.
    public func storedNodeOffsets() throws -> [String: Double] {
        var offsets: [String: Double] = [:]
        for row in try query("SELECT node_key, offset_db FROM presence.node_calibration").rows {
            if let node = row.string(0), let offset = try row.double(1) { offsets[node] = offset }
        }
        return offsets
    }

    /// Stores the offsets self-calibration applies, with what their fit rests on (the links and
    /// residual of each node's group), so that the next start applies them at once: rows of
    /// unpinned nodes it no longer applies go, those of pinned nodes stay (`pinNode` can pin them);
    /// nodes no longer registered are passed over.
    public func storeNodeCalibration(_ calibration: SelfCalibration.Summary) throws {
        guard let fittedAt = calibration.fittedAt else { return }
        let rows = calibration.applied.filter(\.value.isFinite).sorted { $0.key < $1.key }
        let keys = PostgresArray(rows.map(\.key))
        let groups = rows.map { row in calibration.fit.map { fit in fit.group(of: row.key).map { ($0.links, $0.residual) } ?? (fit.links, fit.residual) } }
        try transaction { db in
            _ = try db.query("""
                DELETE FROM presence.node_calibration c USING presence.nodes n
                WHERE c.node_key = n.key AND NOT n.pinned AND NOT c.node_key = ANY($1::text[])
                """, [keys])
            _ = try db.query("""
                INSERT INTO presence.node_calibration (node_key, offset_db, links, residual_db, readings, fitted_at)
                SELECT v.k, v.o, v.l, v.r, $5, to_timestamp($6::bigint / 1000.0)
                FROM unnest($1::text[], $2::double precision[], $3::integer[], $4::double precision[]) AS v (k, o, l, r)
                JOIN presence.nodes n ON n.key = v.k
                ON CONFLICT (node_key) DO UPDATE SET offset_db = EXCLUDED.offset_db, links = EXCLUDED.links,
                    residual_db = EXCLUDED.residual_db, readings = EXCLUDED.readings, fitted_at = EXCLUDED.fitted_at
                """, [keys, PostgresArray(rows.map(\.value)), PostgresArray(groups.map { $0.map { Int(Int32(clamping: $0.0)).postgresText } }),
                      PostgresArray(groups.map { $0.flatMap { $0.1.isFinite ? $0.1.postgresText : nil } }), Int(Int32(clamping: calibration.readings)),
                      Int64(TimeBounds.clamped(fittedAt))])
        }
    }
}
