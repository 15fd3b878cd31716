/// Turns sightings into observations by the contract's two ways: a registered device heard by a
/// node anchored to a beacon (fixed scanners, carried tags), or a node registered as a device
/// (`node:<key>`) hearing a beacon's radio identity or region (carried scanners, fixed beacons).
/// Everything else is dropped with a reason; nothing about unregistered identities is kept.
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

    /// What an observation needs of a registered device.
    fileprivate struct DeviceEntry: Sendable {
        var identity: String
        var user: String
        var tx: Double?
    }

    /// A node anchored to a beacon: what observations of the tags it hears need.
    fileprivate struct Anchor: Sendable {
        var beacon: String
        var venue: String?
        var radius: Double?
        var rssiOffset: Double
        var geometry: LinkGeometry?
    }

    /// A node registered as a device, carried by a user.
    fileprivate struct Carrier: Sendable {
        var device: DeviceEntry
        var rssiOffset: Double
    }

    fileprivate let devices: [String: Int]
    fileprivate let deviceEntries: [DeviceEntry]
    fileprivate let deviceTable: IdentityTable<Int>
    private let anchors: [String: Anchor]
    private let carriers: [String: Carrier]
    private let beaconsByIdentity: [String: Registry.Beacon]
    fileprivate let beaconGeometry: [String: LinkGeometry]
    private let hasRegions: Bool
    private let incognitoUntil: [String: Int64]

    public init(registry: Registry) {
        let sortedDevices = registry.devices.values.sorted { $0.identity < $1.identity }
        deviceEntries = sortedDevices.map { DeviceEntry(identity: $0.identity, user: $0.user, tx: $0.tx.map(Double.init)) }
        devices = Dictionary(uniqueKeysWithValues: sortedDevices.enumerated().map { ($1.identity, $0) })
        deviceTable = IdentityTable(sortedDevices.enumerated().map { ($1.identity, $0) })
        var anchors: [String: Anchor] = [:]
        for node in registry.nodes.values {
            if let key = node.beacon, let beacon = registry.beacons[key] {
                let nodePoint = Coordinates(x: node.x, y: node.y, floor: node.floor ?? beacon.floor)
                let beaconPoint = Coordinates(x: beacon.x, y: beacon.y, floor: beacon.floor ?? node.floor)
                let geometry = (nodePoint ?? beaconPoint).flatMap { point in (beaconPoint ?? nodePoint).map { LinkGeometry(anchor: point, place: $0) } }
                anchors[node.key] = Anchor(beacon: beacon.key, venue: beacon.venue, radius: beacon.radius, rssiOffset: node.rssiOffset, geometry: geometry)
            }
        }
        self.anchors = anchors
        var carriers: [String: Carrier] = [:]
        for device in sortedDevices where device.identity.hasPrefix("node:") {
            let key = String(device.identity.dropFirst(5))
            carriers[key] = Carrier(device: DeviceEntry(identity: device.identity, user: device.user, tx: device.tx.map(Double.init)),
                                    rssiOffset: registry.nodes[key]?.rssiOffset ?? 0)
        }
        self.carriers = carriers
        var byIdentity: [String: Registry.Beacon] = [:]
        var geometry: [String: LinkGeometry] = [:]
        var hasRegions = false
        for beacon in registry.beacons.values {
            if let point = Coordinates(x: beacon.x, y: beacon.y, floor: beacon.floor) {
                geometry[beacon.key] = LinkGeometry(anchor: point, place: point)
            }
            guard let identity = beacon.identity else { continue }
            byIdentity[identity] = beacon
            if (try? Identity(parsing: identity, allowRegion: true))?.isRegion ?? false { hasRegions = true }
        }
        beaconsByIdentity = byIdentity
        beaconGeometry = geometry
        self.hasRegions = hasRegions
        incognitoUntil = registry.users.compactMapValues(\.incognitoUntil)
    }

    /// The observation a sighting from `node` makes, at `time` (its corrected timestamp).
    public func match(_ sighting: Sighting, node: String, time: Int64) -> Result<Observation, Drop> {
        forNode(node).match(sighting, time: time)
    }

    /// A matcher for the sightings of one node (one batch): the node is looked up once.
    public func forNode(_ node: String) -> NodeMatcher {
        NodeMatcher(matcher: self, node: node, anchor: anchors[node], carrier: carriers[node])
    }

    /// Matches the sightings of one node.
    public struct NodeMatcher: Sendable {
        fileprivate let matcher: ObservationMatcher
        public let node: String
        fileprivate let anchor: Anchor?
        fileprivate let carrier: Carrier?

        /// Whether any sighting of this node could match.
        public var isKnown: Bool { anchor != nil || carrier != nil }

        /// The observation a sighting of this node makes, at `time` (its corrected timestamp).
        public func match(_ sighting: Sighting, time: Int64) -> Result<Observation, Drop> {
            match(id: sighting.id, device: matcher.devices[sighting.id], rssi: sighting.rssi, tx: sighting.tx, time: time)
        }

        /// The observation a scanned sighting of this node makes, its identity looked up by its
        /// bytes in `payload`.
        public func match(_ sighting: SightingBatchDecoder.Scanned, in payload: UnsafeRawBufferPointer, time: Int64) -> Result<Observation, Drop> {
            guard anchor != nil || carrier != nil else { return .failure(.unknownNode) }
            let device: Int?
            switch sighting.id {
            case .bytes(let range): device = anchor == nil ? nil : matcher.deviceTable.value(for: UnsafeRawBufferPointer(rebasing: payload[range]))
            case .text(let text): device = anchor == nil ? nil : matcher.devices[text]
            }
            if device == nil, carrier == nil { return .failure(.unregistered) }
            let id = device.map { matcher.deviceEntries[$0].identity } ?? sighting.id.string(in: payload)
            return match(id: id, device: device, rssi: sighting.rssi, tx: sighting.tx, time: time)
        }

        private func match(id: String, device index: Int?, rssi: Int, tx frameTx: Int?, time: Int64) -> Result<Observation, Drop> {
            if let anchor, let index {
                let device = matcher.deviceEntries[index]
                if matcher.isIncognito(device.user, at: time) { return .failure(.incognito) }
                let tx = device.tx ?? frameTx.map(Double.init)
                return .success(Observation(
                    time: time, user: device.user, device: device.identity, beacon: anchor.beacon, venue: anchor.venue,
                    node: node, rssi: Double(rssi) + anchor.rssiOffset, tx: tx ?? ObservationMatcher.defaultTx, txKnown: tx != nil,
                    radius: anchor.radius, geometry: anchor.geometry))
            }
            if let carrier, let beacon = matcher.beacon(heard: id) {
                if matcher.isIncognito(carrier.device.user, at: time) { return .failure(.incognito) }
                let tx = beacon.tx.map(Double.init) ?? frameTx.map(Double.init)
                return .success(Observation(
                    time: time, user: carrier.device.user, device: carrier.device.identity, beacon: beacon.key, venue: beacon.venue,
                    node: node, rssi: Double(rssi) + carrier.rssiOffset, tx: tx ?? ObservationMatcher.defaultTx, txKnown: tx != nil,
                    radius: beacon.radius, geometry: matcher.beaconGeometry[beacon.key]))
            }
            return .failure(isKnown ? .unregistered : .unknownNode)
        }
    }

    /// The beacon whose identity or region matches `identity` most specifically.
    public func beacon(heard identity: String) -> Registry.Beacon? {
        if let beacon = beaconsByIdentity[identity] { return beacon }
        guard hasRegions else { return nil }
        for region in Identity.enclosingRegions(of: identity) {
            if let beacon = beaconsByIdentity[region] { return beacon }
        }
        return nil
    }

    fileprivate func isIncognito(_ user: String, at time: Int64) -> Bool {
        guard !incognitoUntil.isEmpty else { return false }
        return incognitoUntil[user].map { time < $0 } ?? false
    }
}
