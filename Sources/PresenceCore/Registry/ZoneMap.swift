/// Which zones each beacon lies in, outermost first, from a registry: a beacon's zone and that
/// zone's parents, to any depth. A beacon registered with an iBeacon region (`ibeacon:<uuid>` or
/// `ibeacon:<uuid>:<major>`) stands for a zone of its own, keyed like the beacon: it holds the
/// beacon and every beacon whose identity lies in the region and names no zone itself, and lies
/// in the beacon's zone or else in the next wider region's. A chain that loops is cut where it
/// would repeat a zone, and a parent that is not registered ends it.
public struct ZoneMap: Sendable, Equatable {
    /// The zones a chain climbs at most: deeper nesting is cut there.
    public static let maximumDepth = 32

    /// Every zone, those regions stand for included.
    public private(set) var zones: [String: Registry.Zone] = [:]
    /// Each beacon's zones, outermost first; beacons in no zone are absent.
    private var chains: [String: [String]] = [:]
    /// Each zone's beacons, at any depth, sorted.
    public private(set) var beacons: [String: [String]] = [:]

    public init() {}

    public init(registry: Registry) {
        zones = registry.zones
        var regions: [String: String] = [:]
        for beacon in registry.beacons.values {
            guard let identity = beacon.identity, Self.isRegion(identity) else { continue }
            regions[identity] = beacon.key
            if zones[beacon.key] == nil {
                zones[beacon.key] = Registry.Zone(key: beacon.key, venue: beacon.venue, name: beacon.name)
            }
        }
        guard !zones.isEmpty else { return }
        // A region zone's parent: its beacon's zone, else the next wider region's zone.
        for (identity, key) in regions where registry.zones[key] == nil {
            zones[key]?.parent = registry.beacons[key]?.zone ?? Self.widerRegion(than: identity, in: regions)
        }
        for beacon in registry.beacons.values {
            let innermost: String?
            if let identity = beacon.identity, let key = regions[identity] {
                innermost = key
            } else {
                innermost = beacon.zone ?? beacon.identity.flatMap { Self.widerRegion(than: $0, in: regions) }
            }
            guard let innermost else { continue }
            let chain = climb(from: innermost)
            guard !chain.isEmpty else { continue }
            chains[beacon.key] = chain
            for zone in chain { beacons[zone, default: []].append(beacon.key) }
        }
        for zone in beacons.keys { beacons[zone]?.sort() }
    }

    /// Whether no beacon lies in a zone.
    public var isEmpty: Bool { chains.isEmpty }

    /// The zones `beacon` lies in, outermost first (empty when none).
    public func zones(of beacon: String) -> [String] {
        chains[beacon] ?? []
    }

    /// `zone` and the zones above it, outermost first, stopping at an unregistered parent or a repeat.
    private func climb(from zone: String) -> [String] {
        var chain: [String] = []
        var next: String? = zone
        while let key = next, zones[key] != nil, !chain.contains(key), chain.count < Self.maximumDepth {
            chain.append(key)
            next = zones[key]?.parent
        }
        return chain.reversed()
    }

    /// Whether `identity` is an iBeacon region: a UUID alone, or with a major but no minor.
    private static func isRegion(_ identity: String) -> Bool {
        identity.hasPrefix("ibeacon:") && identity.utf8.count(where: { $0 == UInt8(ascii: ":") }) < 3
    }

    /// The beacon key of the narrowest region in `regions` that holds `identity`, itself apart.
    private static func widerRegion(than identity: String, in regions: [String: String]) -> String? {
        guard identity.hasPrefix("ibeacon:") else { return nil }
        var parts = identity.dropFirst(8).split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        parts.removeLast()
        while !parts.isEmpty {
            if let key = regions["ibeacon:" + parts.joined(separator: ":")] { return key }
            parts.removeLast()
        }
        return nil
    }
}
