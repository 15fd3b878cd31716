/// "Device D of user U was heard near beacon B": a sighting matched to the registry, with
/// everything the engine needs so that it never looks anything up itself.
public struct Observation: Sendable, Equatable {
    /// When it was heard, ms since the Unix epoch (corrected node time).
    public var time: Int64
    public var user: String
    /// Canonical identity of the carried device (a tag, or `node:<key>` for a worn scanner).
    public var device: String
    public var beacon: String
    public var venue: String?
    /// The node that heard it.
    public var node: String
    /// Received strength corrected by the node's RSSI offset, dBm.
    public var rssi: Double
    /// Calibrated power at 1 m of the transmitter, dBm.
    public var tx: Double
    /// Whether `tx` came from the frame or the registry rather than the default.
    public var txKnown: Bool
    /// The beacon's radius, m, if it has one.
    public var radius: Double?
    /// Where the fixed end of the radio link and the place are, when known.
    public var geometry: LinkGeometry?

    /// Where the fixed end of the radio link is (the node hearing a tag, or the beacon a carried
    /// scanner hears): what a position estimate is made from.
    public var anchor: Coordinates? { geometry?.anchor }
    /// Where the beacon (the place) is.
    public var place: Coordinates? { geometry?.place }

    public init(time: Int64, user: String, device: String, beacon: String, venue: String?, node: String,
                rssi: Double, tx: Double, txKnown: Bool = true, radius: Double? = nil, geometry: LinkGeometry? = nil) {
        self.time = time
        self.user = user
        self.device = device
        self.beacon = beacon
        self.venue = venue
        self.node = node
        self.rssi = rssi
        self.tx = tx
        self.txKnown = txKnown
        self.radius = radius
        self.geometry = geometry
    }
}

/// Where a radio link's fixed end and its place are: shared by every observation of the link,
/// so that an observation carries one reference rather than two points.
public final class LinkGeometry: Sendable, Equatable {
    public let anchor: Coordinates
    public let place: Coordinates

    public init(anchor: Coordinates, place: Coordinates) {
        self.anchor = anchor
        self.place = place
    }

    public static func == (lhs: LinkGeometry, rhs: LinkGeometry) -> Bool {
        lhs.anchor == rhs.anchor && lhs.place == rhs.place
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
