/// Everything the aggregator knows about a venue's things at one moment: venues, zones, beacons,
/// nodes, users and devices. A value: the aggregator swaps in a new one when the database says the
/// registry changed.
public struct Registry: Sendable, Equatable {
    public var venues: [String: Venue]
    /// Places within places: floors, halls, offices, each holding beacons and zones.
    public var zones: [String: Zone] = [:]
    public var beacons: [String: Beacon]
    public var nodes: [String: Node]
    public var users: [String: User]
    /// Devices by canonical identity.
    public var devices: [String: Device]
    /// How many users have been forgotten so far (`presencectl user forget`): users missing from
    /// a registry whose count grew are dropped without a trace.
    public var erasures: Int64 = 0
    /// The venue's shard count (`presence.settings`), which nodes read on `{p}/v1/config`.
    public var shards = Shards.one

    /// The devices in the order of their identities: a device's position here is its number for
    /// the observation matcher and the fleet's health alike.
    public var devicesInIdentityOrder: [Device] {
        devices.values.sorted { $0.identity < $1.identity }
    }

    /// Each user's home shard: the lowest shard of their devices, so that one aggregator decides
    /// for all of a user's devices. Users without a device are on no shard.
    public func homeShards() -> [String: Int] {
        var home: [String: Int] = [:]
        guard shards.count > 1 else {
            for device in devices.values { home[device.user] = 0 }
            return home
        }
        for device in devices.values {
            let shard = shards.shard(of: device.identity)
            home[device.user] = min(home[device.user] ?? shard, shard)
        }
        return home
    }

    public init(venues: [Venue] = [], zones: [Zone] = [], beacons: [Beacon] = [], nodes: [Node] = [], users: [User] = [], devices: [Device] = []) {
        self.venues = Dictionary(venues.map { ($0.key, $0) }, uniquingKeysWith: { $1 })
        self.zones = Dictionary(zones.map { ($0.key, $0) }, uniquingKeysWith: { $1 })
        self.beacons = Dictionary(beacons.map { ($0.key, $0) }, uniquingKeysWith: { $1 })
        self.nodes = Dictionary(nodes.map { ($0.key, $0) }, uniquingKeysWith: { $1 })
        self.users = Dictionary(users.map { ($0.key, $0) }, uniquingKeysWith: { $1 })
        self.devices = Dictionary(devices.map { ($0.identity, $0) }, uniquingKeysWith: { $1 })
    }

    /// A place people gather: a conference, an office, a building.
    public struct Venue: Sendable, Equatable {
        public var key: String
        public var name: String?
        public init(key: String, name: String? = nil) {
            self.key = key
            self.name = name
        }
    }

    /// A place that holds beacons and other zones (a floor, a hall, an office): a person is in it
    /// while at any beacon inside it, at any depth.
    public struct Zone: Sendable, Equatable {
        public var key: String
        public var venue: String?
        public var name: String?
        /// The zone this one lies in, if any.
        public var parent: String?

        public init(key: String, venue: String? = nil, name: String? = nil, parent: String? = nil) {
            self.key = key
            self.venue = venue
            self.name = name
            self.parent = parent
        }
    }

    /// A place a person can be at (booth, room, desk), with an optional radio identity or region.
    public struct Beacon: Sendable, Equatable {
        public var key: String
        public var venue: String?
        public var name: String?
        /// The zone the beacon lies in, if any.
        public var zone: String?
        /// Canonical identity or region of the beacon hanging there, if any.
        public var identity: String?
        public var x: Double?
        public var y: Double?
        public var floor: Int?
        /// Beyond this estimated distance (m) a device does not count as at the beacon.
        public var radius: Double?
        /// Calibrated power at 1 m of the beacon's radio, overriding what its frames say.
        public var tx: Int?
        public var hello: String?
        public var goodbye: String?
        /// The margin, dB, and dwell, ms, a move to or from this beacon needs at least, and how
        /// long after the last sighting a session here times out, ms; nil follows the engine's
        /// configuration (see `PlacePolicies`).
        public var switchMargin: Double?
        public var switchDwell: Int64?
        public var absenceTimeout: Int64?
        /// Keys of the beacons next to this one; empty when not declared.
        public var nextTo: [String]

        public init(key: String, venue: String? = nil, name: String? = nil, identity: String? = nil, x: Double? = nil, y: Double? = nil,
                    floor: Int? = nil, radius: Double? = nil, tx: Int? = nil, hello: String? = nil, goodbye: String? = nil,
                    switchMargin: Double? = nil, switchDwell: Int64? = nil, absenceTimeout: Int64? = nil, nextTo: [String] = [], zone: String? = nil) {
            self.key = key
            self.venue = venue
            self.name = name
            self.zone = zone
            self.identity = identity
            self.x = x
            self.y = y
            self.floor = floor
            self.radius = radius
            self.tx = tx
            self.hello = hello
            self.goodbye = goodbye
            self.switchMargin = switchMargin
            self.switchDwell = switchDwell
            self.absenceTimeout = absenceTimeout
            self.nextTo = nextTo
        }
    }

    /// A scanner that publishes what it hears; anchored to a beacon when it stands at one.
    public struct Node: Sendable, Equatable {
        public var key: String
        public var venue: String?
        public var beacon: String?
        public var x: Double?
        public var y: Double?
        public var floor: Int?
        /// Added to every RSSI the node reports, dB, to even out receivers.
        public var rssiOffset: Double
        /// Whether `rssiOffset` was set by hand: self-calibration leaves the node alone, even at 0.
        public var pinned: Bool

        public init(key: String, venue: String? = nil, beacon: String? = nil, x: Double? = nil, y: Double? = nil, floor: Int? = nil, rssiOffset: Double = 0,
                    pinned: Bool = false) {
            self.key = key
            self.venue = venue
            self.beacon = beacon
            self.x = x
            self.y = y
            self.floor = floor
            self.rssiOffset = rssiOffset
            self.pinned = pinned
        }
    }

    /// A person whose devices are tracked.
    public struct User: Sendable, Equatable {
        public var key: String
        public var name: String?
        /// Until when (ms since the epoch) the user leaves no trace; nil when not incognito.
        public var incognitoUntil: Int64?

        public init(key: String, name: String? = nil, incognitoUntil: Int64? = nil) {
            self.key = key
            self.name = name
            self.incognitoUntil = incognitoUntil
        }

        /// Whether the user is incognito at `time`.
        public func isIncognito(at time: Int64) -> Bool {
            incognitoUntil.map { time < $0 } ?? false
        }
    }

    /// A thing a user carries: a tag, a phone, a badge, or a scanner node (`node:<key>`).
    public struct Device: Sendable, Equatable {
        public var identity: String
        public var user: String
        public var name: String?
        /// Calibrated power at 1 m, overriding what the device's frames say.
        public var tx: Int?

        public init(identity: String, user: String, name: String? = nil, tx: Int? = nil) {
            self.identity = identity
            self.user = user
            self.name = name
            self.tx = tx
        }
    }
}
