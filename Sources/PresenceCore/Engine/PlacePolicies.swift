/// What the registry says of each beacon that changes the engine's decisions: its own move margin
/// and dwell, its absence timeout, and which beacons are next to it (`presencectl beacon add
/// --switch-margin --switch-dwell --absence-timeout --next-to`). A beacon that says nothing
/// follows the engine's configuration.
///
/// A move from one beacon to another needs the larger of the two beacons' margins and the longer
/// of their dwells, so a sticky desk holds its user and a door nobody should be put at by a
/// passing glance asks for more, whichever end they are. Adjacency is mutual (`a --next-to b`
/// makes b next to a too): a beacon with neighbours is next only to those, and a move between
/// two beacons that are not next to each other, when either has neighbours, is a jump that needs
/// the engine's jump margin and dwell on top, so nobody teleports across a hall. Moves between
/// beacons that have no neighbours at all are never jumps.
public struct PlacePolicies: Sendable, Equatable {
    /// One beacon's own settings; nil follows the engine's configuration.
    public struct Policy: Sendable, Equatable {
        /// dB (`--switch-margin`).
        public var switchMargin: Double?
        /// ms (`--switch-dwell`).
        public var switchDwell: Int64?
        /// ms (`--absence-timeout`).
        public var absenceTimeout: Int64?
        /// Keys of the beacons next to this one.
        public var neighbours: Set<String>

        public init(switchMargin: Double? = nil, switchDwell: Int64? = nil, absenceTimeout: Int64? = nil, neighbours: Set<String> = []) {
            self.switchMargin = switchMargin
            self.switchDwell = switchDwell
            self.absenceTimeout = absenceTimeout
            self.neighbours = neighbours
        }

        var isDefault: Bool {
            switchMargin == nil && switchDwell == nil && absenceTimeout == nil && neighbours.isEmpty
        }
    }

    /// What a move between two beacons needs.
    public struct MoveRule: Sendable, Equatable {
        /// How much nearer, dB, the new beacon must be.
        public var margin: Double
        /// How long it must stay so, ms (the `dwell` decision; the `evidence` decision scales the
        /// switch evidence by it).
        public var dwell: Int64
        /// Whether the beacons are not next to each other.
        public var isJump: Bool
    }

    /// Policies by beacon key; beacons that follow the configuration are left out.
    public private(set) var policies: [String: Policy] = [:]

    /// No beacon has a setting of its own: every decision follows the configuration.
    public var isEmpty: Bool { policies.isEmpty }

    /// Neighbours are made mutual: a beacon named next to another is next to it too.
    public init(_ policies: [String: Policy] = [:]) {
        var mutual = policies
        for (key, policy) in policies {
            for neighbour in policy.neighbours where neighbour != key {
                mutual[neighbour, default: Policy()].neighbours.insert(key)
            }
        }
        self.policies = mutual.filter { !$0.value.isDefault }
    }

    /// The policies `registry`'s beacons declare; neighbours that are not registered beacons are
    /// left out.
    public init(registry: Registry) {
        var policies: [String: Policy] = [:]
        for beacon in registry.beacons.values {
            policies[beacon.key] = Policy(
                switchMargin: beacon.switchMargin, switchDwell: beacon.switchDwell, absenceTimeout: beacon.absenceTimeout,
                neighbours: Set(beacon.nextTo.filter { registry.beacons[$0] != nil && $0 != beacon.key }))
        }
        self.init(policies)
    }

    /// Whether a move between `a` and `b` goes between neighbours.
    public func areNeighbours(_ a: String, _ b: String) -> Bool {
        let first = policies[a]?.neighbours ?? []
        let second = policies[b]?.neighbours ?? []
        return (first.isEmpty && second.isEmpty) || first.contains(b)
    }

    /// What a move from `from` to `to` needs under `configuration`.
    public func moveRule(from: String, to: String, configuration: EngineConfiguration) -> MoveRule {
        let origin = policies[from]
        let target = policies[to]
        var rule = MoveRule(
            margin: max(origin?.switchMargin ?? configuration.switchMargin, target?.switchMargin ?? configuration.switchMargin),
            dwell: max(origin?.switchDwell ?? configuration.switchDwell, target?.switchDwell ?? configuration.switchDwell),
            isJump: !areNeighbours(from, to))
        if rule.isJump {
            rule.margin += configuration.jumpMargin
            rule.dwell = TimeBounds.sum(rule.dwell, configuration.jumpDwell)
        }
        return rule
    }

    /// How long after the last sighting a session at `beacon` times out.
    public func absenceTimeout(at beacon: String, configuration: EngineConfiguration) -> Int64 {
        policies[beacon]?.absenceTimeout ?? configuration.absenceTimeout
    }
}
