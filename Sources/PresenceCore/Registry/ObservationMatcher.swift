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

    fileprivate struct Anchor: Sendable {
        var beacon: Registry.Beacon
        var rssiOffset: Double
        /// The node's coordinates (else the beacon's: the node stands at it).
        var point: Coordinates?
        /// The beacon's coordinates (else the node's).
        var place: Coordinates?
    }

    fileprivate struct Carrier: Sendable {
        var device: Registry.Device
        var rssiOffset: Double
    }

    fileprivate let devices: [String: Registry.Device]
    private let anchors: [String: Anchor]
    private let carriers: [String: Carrier]
    private let beaconsByIdentity: [String: Registry.Beacon]
    private let hasRegions: Bool
    private let incognitoUntil: [String: Int64]

    public init(registry: Registry) {
        devices = registry.devices
        var anchors: [String: Anchor] = [:]
        for node in registry.nodes.values {
            if let key = node.beacon, let beacon = registry.beacons[key] {
                let nodePoint = Coordinates(x: node.x, y: node.y, floor: node.floor ?? beacon.floor)
                let beaconPoint = Coordinates(x: beacon.x, y: beacon.y, floor: beacon.floor ?? node.floor)
                anchors[node.key] = Anchor(beacon: beacon, rssiOffset: node.rssiOffset, point: nodePoint ?? beaconPoint, place: beaconPoint ?? nodePoint)
            }
        }
        self.anchors = anchors
        var carriers: [String: Carrier] = [:]
        for device in registry.devices.values where device.identity.hasPrefix("node:") {
            let key = String(device.identity.dropFirst(5))
            carriers[key] = Carrier(device: device, rssiOffset: registry.nodes[key]?.rssiOffset ?? 0)
        }
        self.carriers = carriers
        var byIdentity: [String: Registry.Beacon] = [:]
        var hasRegions = false
        for beacon in registry.beacons.values {
            guard let identity = beacon.identity else { continue }
            byIdentity[identity] = beacon
            if (try? Identity(parsing: identity, allowRegion: true))?.isRegion ?? false { hasRegions = true }
        }
        beaconsByIdentity = byIdentity
        self.hasRegions = hasRegions
        incognitoUntil = registry.users.compactMapValues(\.incognitoUntil)
    }

    /// Whether any sighting from `node` could match.
    public func knows(node: String) -> Bool {
        anchors[node] != nil || carriers[node] != nil
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
            if let anchor, let device = matcher.devices[sighting.id] {
                if matcher.isIncognito(device.user, at: time) { return .failure(.incognito) }
                let tx = device.tx.map(Double.init) ?? sighting.tx.map(Double.init)
                return .success(Observation(
                    time: time, user: device.user, device: device.identity, beacon: anchor.beacon.key, venue: anchor.beacon.venue,
                    node: node, rssi: Double(sighting.rssi) + anchor.rssiOffset, tx: tx ?? ObservationMatcher.defaultTx, txKnown: tx != nil,
                    radius: anchor.beacon.radius, anchor: anchor.point, place: anchor.place))
            }
            if let carrier, let beacon = matcher.beacon(heard: sighting.id) {
                if matcher.isIncognito(carrier.device.user, at: time) { return .failure(.incognito) }
                let tx = beacon.tx.map(Double.init) ?? sighting.tx.map(Double.init)
                return .success(Observation(
                    time: time, user: carrier.device.user, device: carrier.device.identity, beacon: beacon.key, venue: beacon.venue,
                    node: node, rssi: Double(sighting.rssi) + carrier.rssiOffset, tx: tx ?? ObservationMatcher.defaultTx, txKnown: tx != nil,
                    radius: beacon.radius, anchor: Coordinates(x: beacon.x, y: beacon.y, floor: beacon.floor),
                    place: Coordinates(x: beacon.x, y: beacon.y, floor: beacon.floor)))
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
