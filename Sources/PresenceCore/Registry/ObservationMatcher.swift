/// Turns sightings into observations by the contract's two ways: a registered device heard by a
/// node anchored to a beacon (fixed scanners, carried tags), or a node registered as a device
/// (`node:<key>`) hearing a beacon's radio identity or region (carried scanners, fixed beacons).
/// Everything else is dropped with a reason; nothing about unregistered identities is kept.
///
/// Each registered device is described once (`ObservedDevice`), and so is each anchored node
/// (`ObservedSite`): an observation's link holds the two, so matching a sighting copies no text
/// and makes nothing, and nothing is kept per (device, node) pair.
public struct ObservationMatcher: Sendable {
    /// Why a sighting became no observation.
    public enum Drop: String, Error, Sendable, CaseIterable {
        /// The node is neither anchored to a beacon nor registered as a device.
        case unknownNode = "unknown_node"
        /// The identity is not a registered device, nor a beacon heard by a device node.
        case unregistered
        /// The user is incognito.
        case incognito
    }

    /// The tx power at 1 m assumed when neither the registry nor the frame states one.
    public static let defaultTx = -59.0

    /// A node that can hear something: anchored to a beacon, carried as a device, or both. Look
    /// it up once per batch with `node(_:)`.
    public final class HearingNode: Sendable {
        public let key: String
        fileprivate let index: Int
        /// Added to every RSSI the node reports, dB.
        fileprivate let rssiOffset: Double
        /// Where the tags it hears are, when it is anchored to a beacon.
        fileprivate let site: ObservedSite?
        /// The device the node is registered as (`node:<key>`), if any.
        fileprivate let carrier: Int?

        fileprivate init(key: String, index: Int, rssiOffset: Double, site: ObservedSite?, carrier: Int?) {
            self.key = key
            self.index = index
            self.rssiOffset = rssiOffset
            self.site = site
            self.carrier = carrier
        }

        fileprivate var isAnchored: Bool { site != nil }
    }

    /// What an observation needs of a beacon a carried scanner can hear.
    private struct BeaconEntry: Sendable {
        var key: String
        var venue: String?
        var radius: Double?
        var point: Coordinates?
    }

    /// The registered devices, sorted by identity.
    private let devices: [ObservedDevice]
    /// Each device's registered tx power, by its index in `devices`.
    private let deviceTx: [Double?]
    private let deviceTable: IdentityTable<Int>
    private let nodes: [String: HearingNode]
    private let beaconEntries: [BeaconEntry]
    /// Each beacon's registered tx power, by the index of its entry.
    private let beaconTx: [Double?]
    private let beaconTable: IdentityTable<Int>
    private let hasRegions: Bool
    private let incognitoUntil: [String: Int64]
    /// The sites of carried scanners hearing beacons, by node and beacon, made when first heard.
    private var carriedSites: [UInt64: ObservedSite] = [:]

    public init(registry: Registry) {
        let sortedDevices = registry.devicesInIdentityOrder
        let homeShards = registry.homeShards()
        devices = sortedDevices.map { ObservedDevice(user: $0.user, identity: $0.identity, shard: homeShards[$0.user] ?? 0) }
        deviceTx = sortedDevices.map { $0.tx.map(Double.init) }
        deviceTable = IdentityTable(sortedDevices.enumerated().map { ($1.identity, $0) })

        let sortedBeacons = registry.beacons.values.sorted { $0.key < $1.key }
        beaconEntries = sortedBeacons.map {
            BeaconEntry(key: $0.key, venue: $0.venue, radius: $0.radius, point: Coordinates(x: $0.x, y: $0.y, floor: $0.floor))
        }
        beaconTx = sortedBeacons.map { $0.tx.map(Double.init) }
        var byIdentity: [String: Int] = [:]
        var hasRegions = false
        for (index, beacon) in sortedBeacons.enumerated() {
            guard let identity = beacon.identity else { continue }
            byIdentity[identity] = index
            if (try? Identity(parsing: identity, allowRegion: true))?.isRegion ?? false { hasRegions = true }
        }
        beaconTable = IdentityTable(byIdentity.map { ($0.key, $0.value) })
        self.hasRegions = hasRegions

        var nodes: [String: HearingNode] = [:]
        for (index, node) in registry.nodes.values.sorted(by: { $0.key < $1.key }).enumerated() {
            var site: ObservedSite?
            if let key = node.beacon, let beacon = registry.beacons[key] {
                let nodePoint = Coordinates(x: node.x, y: node.y, floor: node.floor ?? beacon.floor)
                let beaconPoint = Coordinates(x: beacon.x, y: beacon.y, floor: beacon.floor ?? node.floor)
                let ends = (nodePoint ?? beaconPoint).flatMap { point in (beaconPoint ?? nodePoint).map { (point, $0) } }
                site = ObservedSite(beacon: beacon.key, venue: beacon.venue, node: node.key, radius: beacon.radius, anchor: ends?.0, place: ends?.1)
            }
            let carrier = deviceTable.value(for: "node:" + node.key)
            if site != nil || carrier != nil {
                nodes[node.key] = HearingNode(key: node.key, index: index, rssiOffset: node.rssiOffset, site: site, carrier: carrier)
            }
        }
        // A scanner registered as a device but not as a node still hears beacons, uncorrected.
        for (offset, (index, device)) in sortedDevices.enumerated().filter({ $0.1.identity.hasPrefix("node:") }).enumerated() {
            let key = String(device.identity.dropFirst(5))
            if nodes[key] == nil {
                nodes[key] = HearingNode(key: key, index: registry.nodes.count + offset, rssiOffset: 0, site: nil, carrier: index)
            }
        }
        self.nodes = nodes
        incognitoUntil = registry.users.compactMapValues(\.incognitoUntil)
    }

    /// The node `key` if it can hear anything: anchored to a beacon or registered as a device.
    public func node(_ key: String) -> HearingNode? {
        nodes[key]
    }

    /// The observation a sighting from `node` makes, at `time` (its corrected timestamp).
    public mutating func match(_ sighting: Sighting, node: String, time: Int64) -> Result<Observation, Drop> {
        guard let heard = nodes[node] else { return .failure(.unknownNode) }
        let device = heard.isAnchored ? deviceTable.value(for: sighting.id) : nil
        let beacon = needsBeacon(heard, device: device) ? beaconIndex(heard: sighting.id) : nil
        return match(device: device, beacon: beacon, heardBy: heard, rssi: sighting.rssi, tx: sighting.tx, time: time)
    }

    /// The number of the registered device a scanned identity names (its place in
    /// `Registry.devicesInIdentityOrder`), looked up by its bytes in `payload`.
    public func device(_ identity: TextSpan, in payload: UnsafeRawBufferPointer) -> Int? {
        switch identity {
        case .bytes(let range): deviceTable.value(for: UnsafeRawBufferPointer(rebasing: payload[range]))
        case .text(let text): deviceTable.value(for: text)
        }
    }

    /// The observation a scanned sighting heard by `node` makes, at `time` (its corrected
    /// timestamp); `device` is the registered device its identity names (`device(_:in:)`), and
    /// a beacon's identity is looked up by its bytes in `payload`.
    public mutating func match(_ sighting: SightingBatchDecoder.Scanned, device: Int?, in payload: UnsafeRawBufferPointer, heardBy node: HearingNode?,
                               time: Int64) -> Result<Observation, Drop> {
        guard let node else { return .failure(.unknownNode) }
        let device = node.isAnchored ? device : nil
        var beacon: Int?
        if needsBeacon(node, device: device) {
            switch sighting.id {
            case .bytes(let range):
                beacon = beaconTable.value(for: UnsafeRawBufferPointer(rebasing: payload[range]))
                if beacon == nil, hasRegions { beacon = beaconIndex(heard: sighting.id.string(in: payload)) }
            case .text(let text):
                beacon = beaconIndex(heard: text)
            }
        }
        return match(device: device, beacon: beacon, heardBy: node, rssi: sighting.rssi, tx: sighting.tx, time: time)
    }

    /// Whether a sighting of `node` is matched by the beacon it names: the node carries a scanner
    /// and did not hear a registered device while anchored.
    private func needsBeacon(_ node: HearingNode, device: Int?) -> Bool {
        node.carrier != nil && (!node.isAnchored || device == nil)
    }

    /// The observation of a registered device (index into `devices`) heard by an anchored node,
    /// or of a beacon (index into `beaconEntries`) heard by a carried one.
    private mutating func match(device index: Int?, beacon beaconIndex: Int?, heardBy node: HearingNode, rssi: Int, tx frameTx: Int?,
                                time: Int64) -> Result<Observation, Drop> {
        let link: ObservedLink
        let tx: Double?
        if let site = node.site, let index {
            link = ObservedLink(carried: devices[index], site: site)
            tx = deviceTx[index] ?? frameTx.map(Double.init)
        } else if let carrier = node.carrier, let beaconIndex {
            link = ObservedLink(carried: devices[carrier], site: site(ofBeacon: beaconIndex, heardBy: node))
            tx = beaconTx[beaconIndex] ?? frameTx.map(Double.init)
        } else {
            return .failure(.unregistered)
        }
        if isIncognito(link.user, at: time) { return .failure(.incognito) }
        return .success(Observation(time: time, link: link, rssi: Double(rssi) + node.rssiOffset, tx: tx ?? ObservationMatcher.defaultTx,
                                    txKnown: tx != nil))
    }

    /// Where a carried scanner hears beacon `index`: described the first time, then shared.
    private mutating func site(ofBeacon index: Int, heardBy node: HearingNode) -> ObservedSite {
        let key = UInt64(node.index) << 32 | UInt64(index)
        if let known = carriedSites[key] { return known }
        let beacon = beaconEntries[index]
        let site = ObservedSite(beacon: beacon.key, venue: beacon.venue, node: node.key, radius: beacon.radius, anchor: beacon.point, place: beacon.point)
        carriedSites[key] = site
        return site
    }

    /// The beacon whose identity or region matches `identity` most specifically.
    private func beaconIndex(heard identity: String) -> Int? {
        if let index = beaconTable.value(for: identity) { return index }
        guard hasRegions else { return nil }
        for region in Identity.enclosingRegions(of: identity) {
            if let index = beaconTable.value(for: region) { return index }
        }
        return nil
    }

    private func isIncognito(_ user: String, at time: Int64) -> Bool {
        guard !incognitoUntil.isEmpty else { return false }
        return incognitoUntil[user].map { time < $0 } ?? false
    }
}
