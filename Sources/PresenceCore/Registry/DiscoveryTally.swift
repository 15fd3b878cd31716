/// What `presencectl discover` lists: the identities heard that the registry does not know (not a
/// device, not a beacon's identity or inside its region, not a registered node's own beacon),
/// with the nodes that heard them, how strongly and how often, so that a venue's tags are easy to
/// register. Kept in memory for one run only; the aggregator never stores unregistered identities.
public struct DiscoveryTally: Sendable {
    /// One node's readings of one identity.
    public struct Hearing: Sendable, Equatable {
        public var node: String
        public var sightings: Int
        public var bestRSSI: Int
        public var medianRSSI: Double
    }

    /// One unregistered identity.
    public struct Row: Sendable, Equatable {
        public var identity: String
        public var sightings: Int
        public var bestRSSI: Int
        /// The median of every reading, all nodes together, dBm.
        public var medianRSSI: Double
        /// The latest sighting's time (the node's clock), ms.
        public var lastHeard: Int64
        /// The latest calibrated power at 1 m a frame stated, dBm.
        public var tx: Int?
        /// The latest Eddystone TLM battery voltage heard, mV.
        public var batteryMillivolts: Int?
        /// The nodes that heard it, strongest first.
        public var nodes: [Hearing]
    }

    private struct Readings: Sendable {
        /// How many readings of each RSSI (whole dBm): bounded by the RSSI range, however long the run.
        var counts: [Int: Int] = [:]
        var total = 0
    }

    private struct Entry: Sendable {
        var byNode: [String: Readings] = [:]
        var lastHeard = Int64.min
        /// The latest stated tx power and battery, with when they were heard.
        var tx: (value: Int, at: Int64)?
        var battery: (value: Int, at: Int64)?
    }

    private let devices: Set<String>
    /// Beacon identities and regions, and registered nodes' own beacons.
    private let beacons: Set<String>
    private var heard: [String: Entry] = [:]
    /// Sightings of registered identities, left out.
    public private(set) var registeredSightings = 0

    public init(registry: Registry) {
        devices = Set(registry.devices.keys)
        let nodeKeys = Set(registry.nodes.keys).union(registry.devices.keys.filter { $0.hasPrefix("node:") }.map { String($0.dropFirst(5)) })
        beacons = Set(registry.beacons.values.compactMap(\.identity)).union(nodeKeys.map(NodeBeacon.identity(of:)))
    }

    /// Whether the registry knows `identity`: a device, a beacon (or inside a beacon's region), or
    /// a registered node's own beacon.
    public func isRegistered(_ identity: String) -> Bool {
        devices.contains(identity) || beacons.contains(identity) || Identity.enclosingRegions(of: identity).contains(where: beacons.contains)
    }

    /// Counts a sighting `node` reported, unless its identity is registered.
    public mutating func add(_ sighting: Sighting, node: String) {
        guard !isRegistered(sighting.id) else {
            registeredSightings += 1
            return
        }
        var entry = heard[sighting.id, default: Entry()]
        entry.byNode[node, default: Readings()].counts[sighting.rssi, default: 0] += 1
        entry.byNode[node]?.total += 1
        entry.lastHeard = max(entry.lastHeard, sighting.ts)
        if let tx = sighting.tx, sighting.ts >= entry.tx?.at ?? .min { entry.tx = (tx, sighting.ts) }
        if let battery = sighting.telemetry?.batteryMillivolts, sighting.ts >= entry.battery?.at ?? .min { entry.battery = (battery, sighting.ts) }
        heard[sighting.id] = entry
    }

    /// The identities heard at least `minimumSightings` times, strongest first (then by identity).
    public func rows(minimumSightings: Int = 1) -> [Row] {
        heard.compactMap { identity, entry -> Row? in
            let total = entry.byNode.values.reduce(0) { $0 + $1.total }
            guard total >= minimumSightings else { return nil }
            var all: [Int: Int] = [:]
            for readings in entry.byNode.values { all.merge(readings.counts, uniquingKeysWith: +) }
            let nodes = entry.byNode.map { node, readings in
                Hearing(node: node, sightings: readings.total, bestRSSI: readings.counts.keys.max() ?? 0, medianRSSI: Self.median(readings.counts))
            }.sorted { ($0.bestRSSI, $1.node) > ($1.bestRSSI, $0.node) }
            return Row(identity: identity, sightings: total, bestRSSI: all.keys.max() ?? 0, medianRSSI: Self.median(all), lastHeard: entry.lastHeard,
                       tx: entry.tx?.value, batteryMillivolts: entry.battery?.value, nodes: nodes)
        }.sorted { ($0.bestRSSI, $1.identity) > ($1.bestRSSI, $0.identity) }
    }

    /// The median of readings counted by value (the mean of the two middle ones for an even count).
    private static func median(_ counts: [Int: Int]) -> Double {
        let total = counts.values.reduce(0, +)
        guard total > 0 else { return 0 }
        var seen = 0
        var lower: Int?
        for value in counts.keys.sorted() {
            seen += counts[value] ?? 0
            if lower == nil, seen >= (total + 1) / 2 { lower = value }
            if seen >= total / 2 + 1, let lower { return Double(lower + value) / 2 }
        }
        return Double(lower ?? 0)
    }

    /// `identity` as `discover` shows it by default: its kind (`ibeacon:`, `mac:`...) and 12 hex
    /// digits of its SipHash-2-4 under `key`, a key made for one run. Tells identities apart and
    /// counts them without showing them; another run gives other digits.
    public static func pseudonym(_ identity: String, key: SipHash24.Key) -> String {
        let kind = identity.split(separator: ":", maxSplits: 1).first.map { "\($0):" } ?? ""
        let hash = SipHash24.hash(Array(identity.utf8), key: key)
        let hex = String(hash, radix: 16)
        return kind + "#" + String((String(repeating: "0", count: 16 - hex.count) + hex).prefix(12))
    }
}
