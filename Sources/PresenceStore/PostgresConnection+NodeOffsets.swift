import PresenceCore
import PresencePostgres

extension PostgresConnection {
    /// Sets the RSSI offset (dB to add to every RSSI) of each node in `offsets`, by node key, in
    /// one transaction; nothing changes when one of them is not registered.
    public func setNodeOffsets(_ offsets: [String: Double]) throws {
        let rows = offsets.sorted { $0.key < $1.key }
        try transaction { db in
            let updated = try db.query("""
                UPDATE presence.nodes n SET rssi_offset = v.o, updated_at = now()
                FROM unnest($1::text[], $2::double precision[]) AS v (k, o)
                WHERE n.key = v.k
                RETURNING n.key
                """, [PostgresArray(rows.map(\.key)), PostgresArray(rows.map(\.value))]).rows.compactMap { $0.string(0) }
            if let missing = rows.first(where: { !updated.contains($0.key) }) {
                throw ValueError("node '\(missing.key)' does not exist")
            }
        }
    }
}
