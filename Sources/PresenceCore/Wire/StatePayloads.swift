/// Where a user is now, retained on `{p}/v1/state/users/{user}`; `beacon` nil when nowhere.
public struct UserState: Equatable, Sendable {
    public var user: String
    public var beacon: String?
    public var venue: String?
    /// Since when the user has been at `beacon` (or nowhere), ms since the Unix epoch.
    public var since: Int64
    /// The estimated position, when nodes and beacons have coordinates.
    public var position: Position?
    /// How near the user is to `beacon` now (with ranging on).
    public var ranging: Ranging?

    public init(user: String, beacon: String?, venue: String?, since: Int64, position: Position? = nil, ranging: Ranging? = nil) {
        self.user = user
        self.beacon = beacon
        self.venue = venue
        self.since = since
        self.position = position
        self.ranging = ranging
    }

    public func encoded() -> [UInt8] {
        var writer = JSONWriter()
        writer.object { w in
            w.member("v", 1)
            w.member("user", user)
            w.key("beacon")
            if let beacon { w.string(beacon) } else { w.null() }
            w.key("venue")
            if let venue { w.string(venue) } else { w.null() }
            w.member("since", since)
            if let position {
                w.key("position")
                position.write(to: &w)
            }
            if let ranging {
                w.member("rssi", number: ranging.rssi, decimals: 1)
                w.member("distance", number: ranging.distance)
                w.member("proximity", ranging.proximity.rawValue)
            }
        }
        return writer.bytes
    }
}

/// How near a user is to their beacon: the smoothed RSSI of the nearest reading, the distance it
/// means (m) and its proximity, as an enter reports them.
public struct Ranging: Equatable, Sendable {
    public var rssi: Double?
    public var distance: Double?
    public var proximity: Proximity

    public init(rssi: Double?, distance: Double?, proximity: Proximity) {
        self.rssi = rssi
        self.distance = distance
        self.proximity = proximity
    }

    /// Whether this reading says something new against `previous`: another proximity, or a
    /// distance a tenth (and 5 cm) or more away from it.
    public func differs(from previous: Ranging?) -> Bool {
        guard let previous else { return true }
        guard proximity == previous.proximity else { return true }
        switch (distance, previous.distance) {
        case (nil, nil): return false
        case (let now?, let before?): return abs(now - before) >= max(0.05, 0.1 * before)
        default: return true
        }
    }
}

/// An estimated location in a venue's coordinates, metres, with its accuracy (1σ radius, metres).
public struct Position: Equatable, Sendable {
    public var x: Double
    public var y: Double
    public var floor: Int?
    public var accuracy: Double

    public init(x: Double, y: Double, floor: Int?, accuracy: Double) {
        self.x = x
        self.y = y
        self.floor = floor
        self.accuracy = accuracy
    }

    func write(to writer: inout JSONWriter) {
        writer.object { w in
            w.member("x", number: x)
            w.member("y", number: y)
            w.member("floor", floor)
            w.member("accuracy", number: accuracy)
        }
    }
}

/// Who is at a beacon now, retained on `{p}/v1/state/beacons/{beacon}`.
public struct BeaconState: Equatable, Sendable {
    public var beacon: String
    /// User keys, sorted.
    public var users: [String]

    public init(beacon: String, users: [String]) {
        self.beacon = beacon
        self.users = users
    }

    public func encoded() -> [UInt8] {
        var writer = JSONWriter()
        writer.object { w in
            w.member("v", 1)
            w.member("beacon", beacon)
            w.key("users")
            w.array { w in
                for user in users { w.string(user) }
            }
            w.member("count", users.count)
        }
        return writer.bytes
    }
}

/// A hello or goodbye message for a user at a beacon, on `{p}/v1/notify/{user}`.
public struct PresenceNotification: Equatable, Sendable {
    public enum Kind: String, Sendable {
        case hello, goodbye
    }

    public var user: String
    public var beacon: String
    public var kind: Kind
    public var message: String
    public var at: Int64

    public init(user: String, beacon: String, kind: Kind, message: String, at: Int64) {
        self.user = user
        self.beacon = beacon
        self.kind = kind
        self.message = message
        self.at = at
    }

    public func encoded() -> [UInt8] {
        var writer = JSONWriter()
        writer.object { w in
            w.member("v", 1)
            w.member("user", user)
            w.member("beacon", beacon)
            w.member("kind", kind.rawValue)
            w.member("message", message)
            w.member("at", at)
        }
        return writer.bytes
    }
}

/// Whether a process (node or aggregator) is up, retained; its will sets `offline`.
public struct ServiceStatus: Equatable, Sendable {
    public enum State: String, Sendable {
        case online, offline
        /// Running, deciding and publishing, but with part of its work held back (the aggregator
        /// while its database is unreachable); a `reason` says why.
        case degraded
    }

    public var state: State
    /// Extra string members, written in order (a node's version, adapter, start time...).
    public var details: [(String, String)]
    /// Extra integer members, written after the strings.
    public var numbers: [(String, Int64)]

    public init(state: State, details: [(String, String)] = [], numbers: [(String, Int64)] = []) {
        self.state = state
        self.details = details
        self.numbers = numbers
    }

    public static func == (lhs: ServiceStatus, rhs: ServiceStatus) -> Bool {
        lhs.state == rhs.state && lhs.details.elementsEqual(rhs.details, by: ==) && lhs.numbers.elementsEqual(rhs.numbers, by: ==)
    }

    /// The `state` of a status payload, or nil when it has none (or is not JSON).
    public static func state(of payload: [UInt8]) -> State? {
        payload.withUnsafeBytes { state(of: $0) }
    }

    /// `state(of:)` for a payload that stays where it is.
    public static func state(of bytes: UnsafeRawBufferPointer) -> State? {
        var state: State?
        let parsed: Bool = {
            var reader = JSONReader(bytes)
            do throws(JSONReader.Failure) {
                guard try reader.peekKind() == .object else { return false }
                try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
                    if key.is("state"), try reader.peekKind() == .string {
                        state = State(rawValue: try reader.readString())
                    } else {
                        try reader.skipValue()
                    }
                }
                return true
            } catch {
                return false
            }
        }()
        return parsed ? state : nil
    }

    public func encoded() -> [UInt8] {
        var writer = JSONWriter()
        writer.object { w in
            w.member("v", 1)
            w.member("state", state.rawValue)
            for (key, value) in details { w.member(key, value) }
            for (key, value) in numbers { w.member(key, value) }
        }
        return writer.bytes
    }
}
