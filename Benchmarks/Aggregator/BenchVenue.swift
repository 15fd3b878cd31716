import PresenceCore
import PresencePostgres

/// The registry of a benchmark run: booth `booth-N` with node `node-N` anchored to it, ten booths
/// to a zone `row-K` and every row in zone `hall`, as a venue using zones has them; bulk users
/// `u-N` with tags; `crowd-N` users; and `marker`, whose moves between booth 0 and booth 1 are timed.
struct BenchVenue: Sendable {
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    let scenario: LoadScenario

    static func node(_ index: Int) -> String { "node-\(index)" }
    static func booth(_ index: Int) -> String { "booth-\(index)" }

    /// Bulk device `index`: iBeacon major 1..., minor 0...9999.
    static func device(_ index: Int) -> String { "ibeacon:\(uuid):\(1 + index / 10_000):\(index % 10_000)" }
    static func crowdDevice(_ index: Int) -> String { "ibeacon:\(uuid):60000:\(index)" }
    static let markerDevice = "ibeacon:\(uuid):65000:1"

    /// The home node of bulk device `index` (its booth), and the node at `rank` among those that hear it.
    func node(of index: Int, rank: Int) -> Int { (index + rank) % scenario.nodes }

    /// Creates the registry with COPY, in one transaction; without zones in a schema from before them.
    func register(_ database: PostgresConnection) async throws {
        let scenario = scenario
        _ = try await database.transaction { db in
            _ = try db.query("INSERT INTO presence.venues (key, name) VALUES ('bench', 'Benchmark hall')")
            if try db.query("SELECT to_regclass('presence.zones') IS NOT NULL").rows.first?.bool(0) == true {
                _ = try db.query("INSERT INTO presence.zones (key, venue_key) VALUES ('hall', 'bench')")
                _ = try db.copyIn("COPY presence.zones (key, venue_key, parent_key) FROM STDIN", rows: (0 ..< (scenario.nodes + 9) / 10).map { row in
                    ["row-\(row)", "bench", "hall"]
                })
                _ = try db.copyIn("COPY presence.beacons (key, venue_key, x, y, zone_key) FROM STDIN", rows: (0 ..< scenario.nodes).map { index in
                    [Self.booth(index), "bench", String(index * 5), "0", "row-\(index / 10)"]
                })
            } else {
                _ = try db.copyIn("COPY presence.beacons (key, venue_key, x, y) FROM STDIN", rows: (0 ..< scenario.nodes).map { index in
                    [Self.booth(index), "bench", String(index * 5), "0"]
                })
            }
            _ = try db.copyIn("COPY presence.nodes (key, venue_key, beacon_key, x, y) FROM STDIN", rows: (0 ..< scenario.nodes).map { index in
                [Self.node(index), "bench", Self.booth(index), String(index * 5), "0"]
            })
            var users = (0 ..< scenario.devices).map { ["u-\($0)", Self.device($0)] }
            if scenario.crowd { users += (0 ..< LoadScenario.crowdSize).map { ["crowd-\($0)", Self.crowdDevice($0)] } }
            users.append(["marker", Self.markerDevice])
            _ = try db.copyIn("COPY presence.users (key) FROM STDIN", rows: users.map { [$0[0]] })
            _ = try db.copyIn("COPY presence.devices (identity, user_key, tx) FROM STDIN", rows: users.map { [$0[1], $0[0], "-59"] })
            return users.count
        }
    }
}
