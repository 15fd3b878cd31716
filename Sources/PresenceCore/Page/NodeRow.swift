/// One registered node as the page's health table shows it.
public struct NodeRow: Sendable, Equatable {
    public var key: String
    public var venue: String?
    public var beacon: String?
    public var x: Double?
    public var y: Double?
    public var floor: Int?
    /// Whether it is up: nil until it has been heard or has said.
    public var online: Bool?
    /// Sightings per second in its batches, over about the last 10 s.
    public var sightingsPerSecond: Double?
    /// When it last sent a batch or its status, ms since the Unix epoch.
    public var lastSeen: Int64?
    /// How far its clock runs ahead of the aggregator's (negative: behind), ms.
    public var clockSkew: Int64?
    /// The RSSI offset applied to its readings, dB, and where it comes from
    /// (`pinned`, `fitted` or `none`).
    public var offset: Double
    public var offsetSource: String

    public init(key: String, venue: String? = nil, beacon: String? = nil, x: Double? = nil, y: Double? = nil, floor: Int? = nil,
                online: Bool? = nil, sightingsPerSecond: Double? = nil, lastSeen: Int64? = nil, clockSkew: Int64? = nil,
                offset: Double = 0, offsetSource: String = "none") {
        self.key = key
        self.venue = venue
        self.beacon = beacon
        self.x = x
        self.y = y
        self.floor = floor
        self.online = online
        self.sightingsPerSecond = sightingsPerSecond
        self.lastSeen = lastSeen
        self.clockSkew = clockSkew
        self.offset = offset
        self.offsetSource = offsetSource
    }

    func write(_ w: inout JSONWriter) {
        w.object { w in
            w.member("key", key)
            w.member("venue", venue)
            w.member("beacon", beacon)
            w.member("x", number: x)
            w.member("y", number: y)
            w.member("floor", floor)
            if let online {
                w.key("online")
                w.bool(online)
            }
            w.member("sightings_per_second", number: sightingsPerSecond, decimals: 1)
            w.member("last_seen", lastSeen)
            w.member("clock_skew_ms", clockSkew)
            w.member("offset_db", number: offset, decimals: 1)
            w.member("offset_source", offsetSource)
        }
    }
}
