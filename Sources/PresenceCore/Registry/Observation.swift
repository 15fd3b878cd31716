/// "Device D of user U was heard near beacon B": a sighting matched to the registry, with
/// everything the engine needs so that it never looks anything up itself. What the registry says
/// of the stream (who, which node, which beacon, where) is an `ObservedLink`: two references to
/// descriptions shared by every observation of the same device and of the same node, so that an
/// observation is small and no text is copied per sighting.
public struct Observation: Sendable, Equatable {
    /// When it was heard, ms since the Unix epoch (corrected node time).
    public var time: Int64
    /// Received strength corrected by the node's RSSI offset, dBm.
    public var rssi: Double
    /// Calibrated power at 1 m of the transmitter, dBm.
    public var tx: Double
    /// Whether `tx` came from the frame or the registry rather than the default.
    public var txKnown: Bool
    /// The registry's side: the same for every observation of the same (device, node, beacon).
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
