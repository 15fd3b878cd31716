/// One (device, node, beacon) radio link as the registry describes it: the carried device (whose
/// it is) and the site (which node hears it near which beacon, and where). Both halves are shared:
/// the matcher describes each registered device once and each node once, so a venue of many
/// devices keeps no description per (device, node) pair.
public struct ObservedLink: Sendable, Equatable {
    /// The device a user carries: a tag heard by a node, or a scanner that hears a beacon.
    public let carried: ObservedDevice
    /// Where the link is heard.
    public let site: ObservedSite

    public init(carried: ObservedDevice, site: ObservedSite) {
        self.carried = carried
        self.site = site
    }

    public init(user: String, device: String, beacon: String, venue: String?, node: String, radius: Double? = nil,
                anchor: Coordinates? = nil, place: Coordinates? = nil, shard: Int = 0) {
        self.init(carried: ObservedDevice(user: user, identity: device, shard: shard),
                  site: ObservedSite(beacon: beacon, venue: venue, node: node, radius: radius, anchor: anchor, place: place))
    }

    public var user: String { carried.user }
    public var device: String { carried.identity }
    /// The user's home shard (`Registry.homeShards`): the aggregator that owns it decides for them.
    public var shard: Int { carried.shard }
    public var beacon: String { site.beacon }
    public var venue: String? { site.venue }
    public var node: String { site.node }
    public var radius: Double? { site.radius }
    /// Where the fixed end of the link is (the node hearing a tag, or the beacon a carried scanner hears).
    public var anchor: Coordinates? { site.anchor }
    /// Where the beacon (the place) is.
    public var place: Coordinates? { site.place }

    /// Whether both halves are the very same descriptions (one pointer comparison each).
    func isIdentical(to other: ObservedLink) -> Bool {
        carried === other.carried && site === other.site
    }

    /// Whether `other` is the same stream (device, node and beacon), whatever else changed.
    func isSameStream(as other: ObservedLink) -> Bool {
        isIdentical(to: other) || (node == other.node && beacon == other.beacon && device == other.device)
    }

    public static func == (lhs: ObservedLink, rhs: ObservedLink) -> Bool {
        lhs.isIdentical(to: rhs) || (lhs.user == rhs.user && lhs.device == rhs.device && lhs.shard == rhs.shard && lhs.beacon == rhs.beacon
            && lhs.venue == rhs.venue && lhs.node == rhs.node && lhs.radius == rhs.radius && lhs.anchor == rhs.anchor && lhs.place == rhs.place)
    }
}

/// A registered device as its links describe it: whose it is, its identity and its user's home
/// shard. Immutable, made once per device.
public final class ObservedDevice: Sendable {
    public let user: String
    public let identity: String
    public let shard: Int

    public init(user: String, identity: String, shard: Int = 0) {
        self.user = user
        self.identity = identity
        self.shard = shard
    }
}

/// Where a link is heard: which node hears near which beacon, the beacon's venue and radius, and
/// where the link's ends are. Immutable, made once per anchored node (and once per beacon a
/// carried scanner hears).
public final class ObservedSite: Sendable {
    public let beacon: String
    public let venue: String?
    public let node: String
    public let radius: Double?
    /// Where the fixed end of the link is (the node hearing a tag, or the beacon a carried scanner hears).
    public let anchor: Coordinates?
    /// Where the beacon (the place) is.
    public let place: Coordinates?

    public init(beacon: String, venue: String?, node: String, radius: Double? = nil, anchor: Coordinates? = nil, place: Coordinates? = nil) {
        self.beacon = beacon
        self.venue = venue
        self.node = node
        self.radius = radius
        self.anchor = anchor
        self.place = place
    }
}
