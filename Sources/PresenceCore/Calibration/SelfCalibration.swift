/// The aggregator's self-calibration (`--self-calibrate`): nodes that transmit their node
/// beacons (`presence-scanner --advertise`) hear each other; every minute the readings of the
/// last few minutes are fitted (`NodeLinkCalibration`, with the registered node coordinates) and
/// each node's fitted offset is applied to its RSSI, unless the node is pinned
/// (`Registry.Node.pinned`): it keeps its registered offset, even 0.
///
/// Offsets stored before (`presence.node_calibration`) can seed it: they apply from the start,
/// until a fit replaces them. A registry change carries the applied offsets, the last fit and the
/// revision over (`carried(to:at:)`); the readings start afresh. Pure and deterministic (pipeline
/// time in, offsets out), so that a replay calibrates exactly as the live aggregator did.
/// Readings are bounded per link.
public struct SelfCalibration: Sendable {
    /// How often the fit is redone, ms.
    public static let interval: Int64 = 60_000
    /// A fitted offset that moves less than this (dB) is not applied anew.
    public static let tolerance = 0.25

    /// The last fit, and when it was made (pipeline time).
    public private(set) var fit: NodeLinkCalibration.Fit?
    public private(set) var fittedAt: Int64?
    /// The offsets applied now, by node key (pinned and unfitted nodes are absent).
    public private(set) var applied: [String: Double] = [:]
    /// Node-beacon readings taken.
    public private(set) var readings = 0
    /// Counts the fits that changed `applied`, so that a caller notices one without comparing
    /// offsets (seeding and carrying over are not counted).
    public private(set) var revision = 0

    private var calibration: NodeLinkCalibration
    /// Node key by node-beacon identity, for the registered nodes with coordinates; looked up
    /// by the identity's bytes in the payload, as the matcher looks up devices.
    private let senders: IdentityTable<String>
    private let pinned: Set<String>
    private var nextFit: Int64

    /// A calibration of `registry`'s nodes that have coordinates, starting at `start`, applying
    /// `seed` (offsets by node key, as stored) to the registered nodes that are not pinned.
    public init(registry: Registry, start: Int64, seed: [String: Double] = [:]) {
        let nodes = registry.nodes.values.sorted { $0.key < $1.key }.compactMap { node -> NodeLinkCalibration.Node? in
            guard let x = node.x, let y = node.y else { return nil }
            return NodeLinkCalibration.Node(key: node.key, x: x, y: y, area: Self.area(venue: node.venue, floor: node.floor))
        }
        calibration = NodeLinkCalibration(nodes: nodes)
        senders = IdentityTable(nodes.map { (NodeBeacon.identity(of: $0.key), $0.key) })
        pinned = Set(registry.nodes.values.filter(\.pinned).map(\.key))
        nextFit = TimeBounds.sum(start, Self.interval)
        applied = seed.filter { registry.nodes[$0.key].map { !$0.pinned } ?? false && $0.value.isFinite }
    }

    /// The area a node's coordinates are on, as the fit's groups name it: its venue, and its floor
    /// when it has one (`hall`, `hall floor 2`).
    static func area(venue: String?, floor: Int?) -> String {
        [venue ?? "", floor.map { "floor \($0)" } ?? ""].filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// This calibration for a changed `registry` at `time`: the applied offsets of nodes still
    /// registered and not pinned, the last fit and the revision carry over; readings start afresh
    /// (the nodes' places may have changed).
    public func carried(to registry: Registry, at time: Int64) -> SelfCalibration {
        var next = SelfCalibration(registry: registry, start: time, seed: applied)
        next.fit = fit
        next.fittedAt = fittedAt
        next.revision = revision
        return next
    }

    /// Takes a scanned sighting heard by `node` if it is a registered node's beacon (and says
    /// whether it was); its identity is looked up by its bytes in `payload`.
    public mutating func take(_ sighting: SightingBatchDecoder.Scanned, in payload: UnsafeRawBufferPointer, heardBy node: String) -> Bool {
        let sender: String?
        switch sighting.id {
        case .bytes(let range): sender = senders.value(for: UnsafeRawBufferPointer(rebasing: payload[range]))
        case .text(let text): sender = senders.value(for: text)
        }
        guard let sender else { return false }
        take(from: sender, heardBy: node, rssi: sighting.rssi, tx: sighting.tx)
        return true
    }

    /// Takes a sighting of `identity` heard by `node` if it is a registered node's beacon (and
    /// says whether it was).
    public mutating func take(identity: String, heardBy node: String, rssi: Int, tx: Int?) -> Bool {
        guard let sender = senders.value(for: identity) else { return false }
        take(from: sender, heardBy: node, rssi: rssi, tx: tx)
        return true
    }

    private mutating func take(from sender: String, heardBy node: String, rssi: Int, tx: Int?) {
        calibration.add(receiver: node, transmitter: sender, pathLoss: Double(tx ?? Int(ObservationMatcher.defaultTx)) - Double(rssi))
        readings += 1
    }

    /// Refits when a minute has passed since the last fit; returns the offsets to apply when they
    /// changed (nil otherwise).
    public mutating func refit(at time: Int64) -> [String: Double]? {
        guard time >= nextFit else { return nil }
        nextFit = TimeBounds.sum(time, Self.interval)
        guard let fit = calibration.fit() else { return nil }
        self.fit = fit
        fittedAt = time
        let offsets = fit.offsets.filter { !pinned.contains($0.key) }
        let moved = offsets.count != applied.count || offsets.contains { abs($0.value - (applied[$0.key] ?? .infinity)) >= Self.tolerance }
        guard moved else { return nil }
        applied = offsets
        revision += 1
        return offsets
    }

    /// What the calibration stands on now, for the aggregator's stats.
    public struct Summary: Sendable, Equatable {
        public var readings: Int
        public var fittedAt: Int64?
        public var fit: NodeLinkCalibration.Fit?
        public var applied: [String: Double]

        public init(readings: Int, fittedAt: Int64?, fit: NodeLinkCalibration.Fit?, applied: [String: Double]) {
            self.readings = readings
            self.fittedAt = fittedAt
            self.fit = fit
            self.applied = applied
        }
    }

    public var summary: Summary {
        Summary(readings: readings, fittedAt: fittedAt, fit: fit, applied: applied)
    }

    /// `registry` with the applied offsets as its nodes' RSSI offsets.
    public func calibrated(_ registry: Registry) -> Registry {
        var registry = registry
        for (node, offset) in applied where registry.nodes[node] != nil {
            registry.nodes[node]?.rssiOffset = offset
        }
        return registry
    }
}
