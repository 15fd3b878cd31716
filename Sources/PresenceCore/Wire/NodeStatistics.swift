/// A node's counters, published on `{p}/v1/nodes/{node}/stats` every few seconds (an extension of
/// the contract); the aggregator also takes them as the node's heartbeat.
public struct NodeStatistics: Sendable, Equatable {
    public var node: String
    /// How long the counters cover, ms (since the node started).
    public var uptime: Int64
    /// Advertising reports (or simulated packets) heard per second over the last interval.
    public var reportsPerSecond: Double
    /// Sightings put into batches since the start.
    public var sightings: Int
    /// Batches acknowledged by the broker since the start.
    public var published: Int
    /// Batches or sightings dropped since the start (spool overflow, filters).
    public var dropped: Int
    /// Batches waiting for the broker now.
    public var spooled: Int
    /// Reports per frame kind since the start (ibeacon, altbeacon, eddystone_uid, ...).
    public var kinds: [String: Int]

    public init(node: String, uptime: Int64, reportsPerSecond: Double, sightings: Int, published: Int = 0, dropped: Int = 0, spooled: Int = 0,
                kinds: [String: Int] = [:]) {
        self.node = node
        self.uptime = uptime
        self.reportsPerSecond = reportsPerSecond
        self.sightings = sightings
        self.published = published
        self.dropped = dropped
        self.spooled = spooled
        self.kinds = kinds
    }

    public func encoded() -> [UInt8] {
        var writer = JSONWriter()
        writer.object { w in
            w.member("v", 1)
            w.member("node", node)
            w.member("uptime", uptime)
            w.member("reports_per_s", number: reportsPerSecond, decimals: 1)
            w.member("sightings", sightings)
            w.member("published", published)
            w.member("dropped", dropped)
            w.member("spooled", spooled)
            w.key("kinds")
            w.object { w in
                for (kind, count) in kinds.sorted(by: { $0.key < $1.key }) { w.member(kind, count) }
            }
        }
        return writer.bytes
    }
}
