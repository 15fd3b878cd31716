import PresenceCLI
import PresenceCore

/// A whole venue's registry as a file (`presencectl export`/`import`, YAML): venues, zones, beacons
/// with their zones, policies and neighbours, nodes with their places and pinned offsets, and, only when asked
/// (`--users`: they are personal data), users with their devices. Reading checks every value as
/// the registry commands do and names the first bad one by its place in the file.
struct VenueFile: Codable, Equatable {
    /// The format's version: 1, the default.
    var version: Int? = 1
    var venues: [VenueEntry]?
    var zones: [ZoneEntry]?
    var beacons: [BeaconEntry]?
    var nodes: [NodeEntry]?
    var users: [UserEntry]?

    struct VenueEntry: Codable, Equatable {
        var key: String
        var name: String?
    }

    struct ZoneEntry: Codable, Equatable {
        var key: String
        var venue: String?
        var name: String?
        var parent: String?
    }

    struct BeaconEntry: Codable, Equatable {
        var key: String
        var venue: String?
        var zone: String?
        var name: String?
        var id: String?
        var x: Double?
        var y: Double?
        var floor: Int?
        var radius: Double?
        var tx: Int?
        var hello: String?
        var goodbye: String?
        var switchMargin: Double?
        var switchDwell: String?
        var absenceTimeout: String?
        var nextTo: [String]?

        enum CodingKeys: String, CodingKey {
            case key, venue, zone, name, id, x, y, floor, radius, tx, hello, goodbye
            case switchMargin = "switch_margin", switchDwell = "switch_dwell", absenceTimeout = "absence_timeout", nextTo = "next_to"
        }
    }

    struct NodeEntry: Codable, Equatable {
        var key: String
        var venue: String?
        var beacon: String?
        var x: Double?
        var y: Double?
        var floor: Int?
        /// Present when the node is pinned at this offset.
        var rssiOffset: Double?

        enum CodingKeys: String, CodingKey {
            case key, venue, beacon, x, y, floor
            case rssiOffset = "rssi_offset"
        }
    }

    struct UserEntry: Codable, Equatable {
        var key: String
        var name: String?
        var devices: [DeviceEntry]?
    }

    struct DeviceEntry: Codable, Equatable {
        var id: String
        var name: String?
        var tx: Int?
    }
}

extension VenueFile {
    /// The file of `registry`: everything, or one venue's beacons and nodes; users and their
    /// devices only with `users`.
    init(_ registry: Registry, venue: String?, users withUsers: Bool) {
        let inVenue = { (key: String?) in venue == nil || key == venue }
        venues = registry.venues.values.filter { inVenue($0.key) }.sorted { $0.key < $1.key }.map { VenueEntry(key: $0.key, name: $0.name) }
        let zones = registry.zones.values.filter { inVenue($0.venue) }.sorted { $0.key < $1.key }.map { z in
            ZoneEntry(key: z.key, venue: z.venue, name: z.name, parent: z.parent)
        }
        self.zones = zones.isEmpty ? nil : zones
        beacons = registry.beacons.values.filter { inVenue($0.venue) }.sorted { $0.key < $1.key }.map { b in
            BeaconEntry(key: b.key, venue: b.venue, zone: b.zone, name: b.name, id: b.identity, x: b.x, y: b.y, floor: b.floor, radius: b.radius, tx: b.tx,
                        hello: b.hello, goodbye: b.goodbye, switchMargin: b.switchMargin, switchDwell: b.switchDwell.map(DurationText.format),
                        absenceTimeout: b.absenceTimeout.map(DurationText.format), nextTo: b.nextTo.isEmpty ? nil : b.nextTo.sorted())
        }
        nodes = registry.nodes.values.filter { inVenue($0.venue) }.sorted { $0.key < $1.key }.map { n in
            NodeEntry(key: n.key, venue: n.venue, beacon: n.beacon, x: n.x, y: n.y, floor: n.floor, rssiOffset: n.pinned ? n.rssiOffset : nil)
        }
        guard withUsers else { return }
        let devices = Dictionary(grouping: registry.devices.values, by: \.user)
        users = registry.users.values.sorted { $0.key < $1.key }.map { u in
            let owned = (devices[u.key] ?? []).sorted { $0.identity < $1.identity }.map { DeviceEntry(id: $0.identity, name: $0.name, tx: $0.tx) }
            return UserEntry(key: u.key, name: u.name, devices: owned.isEmpty ? nil : owned)
        }
    }

    /// The registry the file describes, every value checked; the first bad one is named by its
    /// place (`beacons[3].tx`) and the value.
    func registry() throws -> Registry {
        guard (version ?? 1) == 1 else { throw ValueError("version \(version ?? 1) is not valid: expected 1") }
        var registry = Registry()
        for (index, entry) in (venues ?? []).enumerated() {
            let key = try Slug(entry.key, what: "venues[\(index)]")
            registry.venues[key.value] = Registry.Venue(key: key.value, name: entry.name)
        }
        for (index, entry) in (zones ?? []).enumerated() {
            let at = "zones[\(index)]"
            let key = try Slug(entry.key, what: at)
            guard registry.zones[key.value] == nil else { throw ValueError("\(at).key '\(key)' is not valid: zone listed twice") }
            let parent = try entry.parent.map { try Slug($0, what: "\(at).parent").value }
            if parent == key.value { throw ValueError("\(at).parent '\(key)' is not valid: a zone cannot lie inside itself") }
            registry.zones[key.value] = Registry.Zone(key: key.value, venue: try entry.venue.map { try Slug($0, what: "\(at).venue").value },
                                                      name: entry.name, parent: parent)
        }
        for (index, entry) in (beacons ?? []).enumerated() {
            let at = "beacons[\(index)]"
            let key = try Slug(entry.key, what: at)
            guard registry.beacons[key.value] == nil else { throw ValueError("\(at).key '\(key)' is not valid: beacon listed twice") }
            let identity = try entry.id.map { text in
                do { return try Identity(parsing: text, allowRegion: true, allowNode: false).text } catch { throw ValueError("\(at).id: \(error)") }
            }
            if let radius = entry.radius, !(radius > 0 && radius.isFinite) { throw ValueError("\(at).radius \(radius) is not valid: expected metres above 0") }
            if let margin = entry.switchMargin, !(0 ... 100).contains(margin) { throw ValueError("\(at).switch_margin \(margin) is not valid: expected dB from 0 to 100") }
            let dwell = try entry.switchDwell.map { try DurationText.milliseconds($0, what: "\(at).switch_dwell") }
            let timeout = try entry.absenceTimeout.map { try DurationText.milliseconds($0, what: "\(at).absence_timeout") }
            if let timeout, !(1 ... 86_400_000).contains(timeout) {
                throw ValueError("\(at).absence_timeout '\(entry.absenceTimeout ?? "")' is not valid: expected a duration above 0 and at most 1d")
            }
            let neighbours = try (entry.nextTo ?? []).map { try Slug($0, what: "\(at).next_to").value }
            registry.beacons[key.value] = Registry.Beacon(
                key: key.value, venue: try entry.venue.map { try Slug($0, what: "\(at).venue").value }, name: entry.name, identity: identity,
                x: try Self.finite(entry.x, "\(at).x"), y: try Self.finite(entry.y, "\(at).y"), floor: entry.floor, radius: entry.radius,
                tx: try validTx(entry.tx, flag: "\(at).tx"), hello: entry.hello, goodbye: entry.goodbye, switchMargin: entry.switchMargin,
                switchDwell: dwell, absenceTimeout: timeout, nextTo: neighbours, zone: try entry.zone.map { try Slug($0, what: "\(at).zone").value })
        }
        for (index, entry) in (nodes ?? []).enumerated() {
            let at = "nodes[\(index)]"
            let key = try Slug(entry.key, what: at)
            let offset = try validRSSIOffset(entry.rssiOffset, what: "\(at).rssi_offset")
            registry.nodes[key.value] = Registry.Node(
                key: key.value, venue: try entry.venue.map { try Slug($0, what: "\(at).venue").value },
                beacon: try entry.beacon.map { try Slug($0, what: "\(at).beacon").value }, x: try Self.finite(entry.x, "\(at).x"),
                y: try Self.finite(entry.y, "\(at).y"), floor: entry.floor, rssiOffset: offset ?? 0, pinned: offset != nil)
        }
        for (index, entry) in (users ?? []).enumerated() {
            let key = try Slug(entry.key, what: "users[\(index)]")
            registry.users[key.value] = Registry.User(key: key.value, name: entry.name)
            for (deviceIndex, device) in (entry.devices ?? []).enumerated() {
                let at = "users[\(index)].devices[\(deviceIndex)]"
                let identity: Identity
                do { identity = try Identity(parsing: device.id, allowRegion: false, allowNode: true) } catch { throw ValueError("\(at).id: \(error)") }
                guard registry.devices[identity.text] == nil else { throw ValueError("\(at).id '\(device.id)' is not valid: device listed twice") }
                registry.devices[identity.text] = Registry.Device(identity: identity.text, user: key.value, name: device.name,
                                                                  tx: try validTx(device.tx, flag: "\(at).tx"))
            }
        }
        return registry
    }

    /// How many things the file holds (for the progress bar).
    var count: Int {
        (venues?.count ?? 0) + (zones?.count ?? 0) + (beacons?.count ?? 0) + (nodes?.count ?? 0) + (users?.count ?? 0)
            + (users ?? []).reduce(0) { $0 + ($1.devices?.count ?? 0) }
    }

    private static func finite(_ value: Double?, _ at: String) throws -> Double? {
        if let value, !value.isFinite { throw ValueError("\(at) \(value) is not valid: expected metres") }
        return value
    }
}
