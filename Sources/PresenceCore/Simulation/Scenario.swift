/// A simulated venue: beacons, scanner nodes, walls, the radio environment and people following
/// itineraries. Read from a JSON file (`presence-scanner --simulate FILE`) or built in code by
/// tests and benchmarks. Distances are metres, times milliseconds, powers dBm and dB.
public struct Scenario: Codable, Sendable, Equatable {
    public var venue: String
    public var seed: UInt64 = 1
    public var radio = Radio()
    public var walls: [Wall] = []
    public var beacons: [Beacon]
    public var nodes: [Node]
    public var people: [Person]

    public init(venue: String, seed: UInt64 = 1, radio: Radio = Radio(), walls: [Wall] = [], beacons: [Beacon], nodes: [Node], people: [Person]) {
        self.venue = venue
        self.seed = seed
        self.radio = radio
        self.walls = walls
        self.beacons = beacons
        self.nodes = nodes
        self.people = people
    }

    /// An attenuating wall between two points.
    public struct Wall: Codable, Sendable, Equatable {
        public var from: Point
        public var to: Point
        public var loss: Double

        public init(from: Point, to: Point, loss: Double) {
            self.from = from
            self.to = to
            self.loss = loss
        }
    }

    public struct Point: Codable, Sendable, Equatable {
        public var x: Double
        public var y: Double

        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }

        func distance(to other: Point) -> Double {
            ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot()
        }
    }

    /// A place people go to; with an identity it also transmits (heard by carried scanners).
    public struct Beacon: Codable, Sendable, Equatable {
        public var key: String
        public var x: Double
        public var y: Double
        public var name: String?
        public var identity: String?
        public var tx: Double?

        public init(key: String, x: Double, y: Double, name: String? = nil, identity: String? = nil, tx: Double? = nil) {
            self.key = key
            self.x = x
            self.y = y
            self.name = name
            self.identity = identity
            self.tx = tx
        }
    }

    /// A fixed scanner, usually anchored to a beacon.
    public struct Node: Codable, Sendable, Equatable {
        public var key: String
        public var x: Double
        public var y: Double
        public var beacon: String?

        public init(key: String, x: Double, y: Double, beacon: String? = nil) {
            self.key = key
            self.x = x
            self.y = y
            self.beacon = beacon
        }
    }

    /// Someone walking through the venue, carrying a tag (`device`, heard by fixed nodes) or a
    /// scanner (`scanner`, a node key, hearing beacons that have an identity).
    public struct Person: Codable, Sendable, Equatable {
        public var user: String
        public var device: String?
        public var scanner: String?
        /// When the person arrives, ms after the simulation's start.
        public var arrive: Int64 = 0
        /// Where the person comes in and leaves.
        public var entrance: Point
        /// Walking speed, m/s.
        public var speed = 1.2
        public var stops: [Stop]
        /// Whether to come back and walk the stops again after leaving, after `away` ms.
        public var repeats = false
        public var away: Int64 = 20_000
        public var tx: Double?

        public init(user: String, device: String? = nil, scanner: String? = nil, arrive: Int64 = 0, entrance: Point, speed: Double = 1.2,
                    stops: [Stop], repeats: Bool = false, away: Int64 = 20_000, tx: Double? = nil) {
            self.user = user
            self.device = device
            self.scanner = scanner
            self.arrive = arrive
            self.entrance = entrance
            self.speed = speed
            self.stops = stops
            self.repeats = repeats
            self.away = away
            self.tx = tx
        }
    }

    /// A stay at a beacon: the person stands `offset` metres from it (in a direction of their
    /// own, drawn from the seed) for `dwell` ms.
    public struct Stop: Codable, Sendable, Equatable {
        public var beacon: String
        public var dwell: Int64
        public var offset = 1.0

        public init(beacon: String, dwell: Int64, offset: Double = 1.0) {
            self.beacon = beacon
            self.dwell = dwell
            self.offset = offset
        }
    }

    /// Checks references and ranges; the message names the bad value.
    public func validate() throws(ValueError) {
        let beaconKeys = Set(beacons.map(\.key))
        for beacon in beacons { _ = try Slug(beacon.key, what: "beacon") }
        for node in nodes {
            _ = try Slug(node.key, what: "node")
            if let anchor = node.beacon, !beaconKeys.contains(anchor) {
                throw ValueError("node '\(node.key)' is anchored to beacon '\(anchor)', which the scenario does not define")
            }
        }
        for person in people {
            _ = try Slug(person.user, what: "user")
            guard (person.device == nil) != (person.scanner == nil) else {
                throw ValueError("person '\(person.user)' must carry exactly one of 'device' (a tag) or 'scanner' (a node key)")
            }
            if let device = person.device { _ = try Identity(parsing: device, allowNode: false) }
            if let scanner = person.scanner { _ = try Slug(scanner, what: "node") }
            guard !person.repeats || person.away > 0 else {
                throw ValueError("person '\(person.user)' repeats with away \(person.away) ms: expected more than 0")
            }
            guard person.speed > 0 else { throw ValueError("person '\(person.user)' has speed \(person.speed): expected more than 0 m/s") }
            for stop in person.stops where !beaconKeys.contains(stop.beacon) {
                throw ValueError("person '\(person.user)' stops at beacon '\(stop.beacon)', which the scenario does not define")
            }
        }
        try radio.validate()
    }
}
