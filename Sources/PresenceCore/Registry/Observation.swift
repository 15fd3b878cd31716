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

    public init(time: Int64, user: String, device: String, beacon: String, venue: String?, node: String,
                rssi: Double, tx: Double, txKnown: Bool = true, radius: Double? = nil) {
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
    }
}
