/// The health of a venue's fleet at one moment, as the aggregator publishes it retained on
/// `{p}/v1/health` (and an HTTP page may serve it): the problems first, then every registered
/// beacon with a radio identity, every registered tag and every node, with the thresholds that
/// decided the problems. Everything a reader needs is in it. Tags are named by their device
/// identity, never by their user.
public struct FleetReport: Sendable, Equatable {
    /// When the report was made, ms since the epoch.
    public var at: Int64
    public var thresholds: Thresholds
    /// Sorted by kind (low battery, silent, node down, node skewed), then subject.
    public var problems: [Problem]
    /// By beacon key.
    public var beacons: [Beacon]
    /// By identity.
    public var tags: [Tag]
    /// By node key.
    public var nodes: [Node]
    /// A part (one aggregator's, while several share the venue): the shards whose beacons and tags
    /// it lists, and whose sightings its node figures count; nil: the whole venue.
    public var shards: [Int]?

    public init(at: Int64, thresholds: Thresholds, problems: [Problem] = [], beacons: [Beacon] = [], tags: [Tag] = [], nodes: [Node] = [],
                shards: [Int]? = nil) {
        self.at = at
        self.thresholds = thresholds
        self.problems = problems
        self.beacons = beacons
        self.tags = tags
        self.nodes = nodes
        self.shards = shards
    }

    /// The limits the problems were decided by.
    public struct Thresholds: Sendable, Equatable {
        /// A battery below this, mV, is low.
        public var lowBattery: Int
        /// A beacon or tag not heard for longer than this, ms, is silent.
        public var silentAfter: Int64
        /// A node from which nothing came for longer than this, ms, is down.
        public var nodeDownAfter: Int64
        /// A node whose clock is off by more than this, ms, is skewed.
        public var maxSkew: Int64
        /// The report is published again at least this often, ms.
        public var interval: Int64

        public init(lowBattery: Int, silentAfter: Int64, nodeDownAfter: Int64, maxSkew: Int64, interval: Int64) {
            self.lowBattery = lowBattery
            self.silentAfter = silentAfter
            self.nodeDownAfter = nodeDownAfter
            self.maxSkew = maxSkew
            self.interval = interval
        }
    }

    /// What a radio (a beacon or a tag) was last heard saying.
    public struct Radio: Sendable, Equatable {
        /// When a registered node last heard it, ms; nil when not since the aggregator started.
        public var lastHeard: Int64?
        /// Its last Eddystone TLM battery reading, mV, and when that was heard.
        public var batteryMillivolts: Int?
        public var batteryAt: Int64?
        /// Its last TLM temperature, °C, and time since power-up, s.
        public var temperature: Double?
        public var uptime: Double?

        public init(lastHeard: Int64? = nil, batteryMillivolts: Int? = nil, batteryAt: Int64? = nil, temperature: Double? = nil, uptime: Double? = nil) {
            self.lastHeard = lastHeard
            self.batteryMillivolts = batteryMillivolts
            self.batteryAt = batteryAt
            self.temperature = temperature
            self.uptime = uptime
        }
    }

    /// A registered beacon with a radio identity (not a region).
    public struct Beacon: Sendable, Equatable {
        public var key: String
        public var identity: String
        public var radio: Radio

        public init(key: String, identity: String, radio: Radio = Radio()) {
            self.key = key
            self.identity = identity
            self.radio = radio
        }
    }

    /// A registered device that is not a scanner node (scanners are nodes).
    public struct Tag: Sendable, Equatable {
        public var identity: String
        public var radio: Radio

        public init(identity: String, radio: Radio = Radio()) {
            self.identity = identity
            self.radio = radio
        }
    }

    /// A registered node: fixed, or carried (registered as a `node:` device).
    public struct Node: Sendable, Equatable {
        public enum State: String, Sendable, Equatable, CaseIterable {
            /// Heard within the node-down threshold, and its status does not say offline.
            case online
            /// Its retained status says offline (its will, or a clean stop).
            case offline
            /// Nothing came from it for longer than the threshold (or never, since the start).
            case silent
            /// Nothing came from it yet, for less than the threshold since the start.
            case unknown
        }

        public var key: String
        public var state: State
        /// Carried by a person: it goes home with them, so it is never reported down.
        public var carried: Bool
        /// The last message (batch, stats or status) and the last batch from it, ms.
        public var lastHeard: Int64?
        public var lastBatch: Int64?
        /// Sightings per second in its batches over about the last 10 s.
        public var sightingsPerSecond: Double
        /// Advertising reports per second, as its own stats last said; nil without stats.
        public var reportsPerSecond: Double?
        /// Its clock minus the aggregator's, ms (positive: fast), as estimated from its batches.
        public var skew: Int64?

        public init(key: String, state: State, carried: Bool = false, lastHeard: Int64? = nil, lastBatch: Int64? = nil, sightingsPerSecond: Double = 0,
                    reportsPerSecond: Double? = nil, skew: Int64? = nil) {
            self.key = key
            self.state = state
            self.carried = carried
            self.lastHeard = lastHeard
            self.lastBatch = lastBatch
            self.sightingsPerSecond = sightingsPerSecond
            self.reportsPerSecond = reportsPerSecond
            self.skew = skew
        }
    }

    /// Something an operator should look at.
    public struct Problem: Sendable, Equatable {
        public enum Kind: String, Sendable, Equatable, CaseIterable, Comparable {
            case lowBattery = "low_battery"
            case silent
            case nodeDown = "node_down"
            case nodeSkewed = "node_skewed"

            public static func < (a: Kind, b: Kind) -> Bool {
                (allCases.firstIndex(of: a) ?? 0) < (allCases.firstIndex(of: b) ?? 0)
            }
        }

        /// What the problem is about.
        public enum Subject: Sendable, Hashable, Comparable {
            case beacon(String)
            case tag(String)
            case node(String)
        }

        public var kind: Kind
        public var subject: Subject
        /// Low battery: the reading, mV.
        public var batteryMillivolts: Int?
        /// Silent or node down: when it was last heard (nil: not since the start).
        public var lastHeard: Int64?
        /// Node down: its state (offline or silent).
        public var state: Node.State?
        /// Node skewed: its clock minus the aggregator's, ms.
        public var skew: Int64?

        public init(kind: Kind, subject: Subject, batteryMillivolts: Int? = nil, lastHeard: Int64? = nil, state: Node.State? = nil, skew: Int64? = nil) {
            self.kind = kind
            self.subject = subject
            self.batteryMillivolts = batteryMillivolts
            self.lastHeard = lastHeard
            self.state = state
            self.skew = skew
        }
    }

    /// What a change of the report is judged by: which problems there are, what is listed, and
    /// the nodes' states; figures that move all the time (times, readings) are left out.
    public struct Outline: Sendable, Equatable {
        public var problems: [Problem.Kind: [Problem.Subject]]
        public var beacons: [String]
        public var tags: [String]
        public var nodes: [String: Node.State]
        public var shards: [Int]?
    }

    public var outline: Outline {
        Outline(problems: Dictionary(grouping: problems, by: \.kind).mapValues { $0.map(\.subject) }, beacons: beacons.map(\.key),
                tags: tags.map(\.identity), nodes: Dictionary(nodes.map { ($0.key, $0.state) }, uniquingKeysWith: { $1 }), shards: shards)
    }

    /// How many problems of each kind.
    public var problemCounts: [Problem.Kind: Int] {
        Dictionary(grouping: problems, by: \.kind).mapValues(\.count)
    }
}

extension FleetReport {
    /// The report without the devices `identities` (a forgotten user's): their tags, the nodes
    /// they were (`node:<key>`) and the problems about them; nil when it names none of them.
    public func forgetting(_ identities: Set<String>) -> FleetReport? {
        func named(_ subject: Problem.Subject) -> Bool {
            switch subject {
            case .tag(let identity): identities.contains(identity)
            case .node(let key): identities.contains("node:" + key)
            case .beacon: false
            }
        }
        var report = self
        report.tags.removeAll { identities.contains($0.identity) }
        report.nodes.removeAll { identities.contains("node:" + $0.key) }
        report.problems.removeAll { named($0.subject) }
        return report == self ? nil : report
    }
}
