import PresenceCore
import PresencePostgres

extension PostgresConnection {
    /// Adds or updates everything `registry` holds, in one transaction: all of it or, on the first
    /// error, nothing. Nothing absent from it is removed. Nodes are pinned at their offset when
    /// marked pinned; beacons get the neighbours they list. `progress` is called with how many of
    /// the `registry`'s things are done.
    public func importRegistry(_ registry: Registry, progress: @Sendable (Int) -> Void) throws {
        try transaction { db in
            var done = 0
            func step() {
                done += 1
                progress(done)
            }
            for venue in registry.venues.values.sorted(by: { $0.key < $1.key }) {
                try db.upsertVenue(key: try Slug(venue.key, what: "venue"), name: venue.name)
                step()
            }
            // Zones first without their parents, so that a parent is there whatever the order.
            let zones = registry.zones.values.sorted { $0.key < $1.key }
            for zone in zones {
                var bare = zone
                bare.parent = nil
                try db.writeZone(bare)
                step()
            }
            for zone in zones where zone.parent != nil { try db.writeZone(zone) }
            let beacons = registry.beacons.values.sorted { $0.key < $1.key }
            for beacon in beacons {
                try db.writeBeacon(beacon, clearPolicy: false, addNeighbours: [], removeNeighbours: [])
                step()
            }
            for beacon in beacons where !beacon.nextTo.isEmpty {
                try db.writeBeacon(beacon, clearPolicy: false, addNeighbours: beacon.nextTo, removeNeighbours: [])
            }
            for node in registry.nodes.values.sorted(by: { $0.key < $1.key }) {
                try db.writeNode(node, rssiOffset: node.pinned ? node.rssiOffset : nil)
                step()
            }
            for user in registry.users.values.sorted(by: { $0.key < $1.key }) {
                try db.upsertUser(key: try Slug(user.key, what: "user"), name: user.name)
                step()
            }
            for device in registry.devices.values.sorted(by: { $0.identity < $1.identity }) {
                try db.writeDevice(device)
                step()
            }
        }
    }
}
