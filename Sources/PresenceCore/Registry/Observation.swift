/// "Device D of user U was heard near beacon B": a sighting matched to the registry, with
/// everything the engine needs so that it never looks anything up itself. What the registry says
/// of the stream (who, which node, which beacon, where) is one shared `ObservedLink`, so that an
/// observation is small and copying it touches one reference count.
public struct Observation: Sendable, Equatable {
    /// When it was heard, ms since the Unix epoch (corrected node time).
    public var time: Int64
    /// Received strength corrected by the node's RSSI offset, dBm.
    public var rssi: Double
    /// Calibrated power at 1 m of the transmitter, dBm.
    public var tx: Double
    /// Whether `tx` came from the frame or the registry rather than the default.
    public var txKnown: Bool
    /// The registry's side: shared by every observation of the same (device, node, beacon).
    public var link: ObservedLink

    public var user: String { link.user }
    /// Canonical identity of the carried device (a tag, or `node:<key>` for a worn scanner).
    public var device: String { link.device }
    public var beacon: String { link.beacon }
    public var venue: String? { link.venue }
    /// The node that heard it.
    public var node: String { link.node }
    /// The beacon's radius, m, if it has one.
    public var radius: Double? { link.radius }
    /// Where the fixed end of the radio link is (the node hearing a tag, or the beacon a carried
    /// scanner hears): what a position estimate is made from.
    public var anchor: Coordinates? { link.anchor }
    /// Where the beacon (the place) is.
    public var place: Coordinates? { link.place }

    public init(time: Int64, link: ObservedLink, rssi: Double, tx: Double, txKnown: Bool) {
        self.time = time
        self.link = link
        self.rssi = rssi
        self.tx = tx
        self.txKnown = txKnown
    }

    public init(time: Int64, user: String, device: String, beacon: String, venue: String?, node: String,
                rssi: Double, tx: Double, txKnown: Bool = true, radius: Double? = nil) {
        self.init(time: time, link: ObservedLink(user: user, device: device, beacon: beacon, venue: venue, node: node, radius: radius),
                  rssi: rssi, tx: tx, txKnown: txKnown)
    }
}

/// One (device, node, beacon) radio link as the registry describes it: whose device, which node
/// hears it near which beacon, the beacon's radius, and where the link's ends are. Immutable and
/// shared: the matcher makes one per link and hands it to every observation of that link.
public final class ObservedLink: Sendable, Equatable {
    public let user: String
    public let device: String
    public let beacon: String
    public let venue: String?
    public let node: String
    public let radius: Double?
    /// Where the fixed end of the link is (the node hearing a tag, or the beacon a carried scanner hears).
    public let anchor: Coordinates?
    /// Where the beacon (the place) is.
    public let place: Coordinates?
    /// The user's home shard (`Registry.homeShards`): the aggregator that owns it decides for them.
    public let shard: Int

    public init(user: String, device: String, beacon: String, venue: String?, node: String, radius: Double? = nil,
                anchor: Coordinates? = nil, place: Coordinates? = nil, shard: Int = 0) {
        self.user = user
        self.shard = shard
        self.device = device
        self.beacon = beacon
        self.venue = venue
        self.node = node
        self.radius = radius
        self.anchor = anchor
        self.place = place
    }

    /// Whether `other` is the same stream (device, node and beacon), whatever else changed.
    func isSameStream(as other: ObservedLink) -> Bool {
        self === other || (node == other.node && beacon == other.beacon && device == other.device)
    }

    public static func == (lhs: ObservedLink, rhs: ObservedLink) -> Bool {
        lhs === rhs || (lhs.user == rhs.user && lhs.device == rhs.device && lhs.beacon == rhs.beacon && lhs.venue == rhs.venue
            && lhs.node == rhs.node && lhs.radius == rhs.radius && lhs.anchor == rhs.anchor && lhs.place == rhs.place && lhs.shard == rhs.shard)
    }
}

/// A point in a venue's coordinates, metres, with its floor.
public struct Coordinates: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var floor: Int?

    public init(x: Double, y: Double, floor: Int? = nil) {
        self.x = x
        self.y = y
        self.floor = floor
    }

    /// The point of something registered with optional coordinates.
    init?(x: Double?, y: Double?, floor: Int?) {
        guard let x, let y else { return nil }
        self.init(x: x, y: y, floor: floor)
    }

    func distance(to other: Coordinates) -> Double {
        ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot()
    }
}
