/// Who is where, as subscribers, the venue page and Home Assistant see it, derived from events:
/// who is at each beacon, where each user is (with the reading of the enter that put them there),
/// and which retained states must be published again after some events.
public struct PresenceBoard: Sendable {
    private var occupants: [String: Set<String>] = [:]
    /// Where each user is, with the distance and proximity of each present user's enter.
    private var places = UserPlaces()
    /// Whether users' states carry how near they are to their beacon (`Ranging`): an enter's
    /// reading, then what `range(_:_:)` brings.
    public var ranges = false

    /// How near an enter found its user.
    public struct Reading: Sendable, Equatable {
        public var distance: Double?
        public var proximity: Proximity?
    }

    public init() {}

    /// The retained messages that change after some events.
    public struct Changes: Sendable, Equatable {
        public var users: [UserState] = []
        /// Users whose retained state must be deleted (incognito or removed: no trace is kept).
        public var clearedUsers: [String] = []
        public var beacons: [BeaconState] = []
        /// Beacons no longer registered, whose retained state must be deleted.
        public var deletedBeacons: [String] = []

        public init() {}

        public var isEmpty: Bool { users.isEmpty && clearedUsers.isEmpty && beacons.isEmpty && deletedBeacons.isEmpty }
    }

    /// Starts from sessions resumed after a restart; returns every state to publish afresh.
    public mutating func restore(_ sessions: [Presence], beacons: [String]) -> Changes {
        for session in sessions {
            occupants[session.beacon, default: []].insert(session.user)
            places.update(UserState(user: session.user, beacon: session.beacon, venue: session.venue, since: session.entered))
        }
        var changes = Changes()
        changes.users = places.users.sorted().compactMap { places.state(of: $0) }
        changes.beacons = Set(beacons).union(occupants.keys).sorted().map { BeaconState(beacon: $0, users: occupants[$0, default: []].sorted()) }
        return changes
    }

    /// The users the board holds a place of.
    public var users: Dictionary<String, Int32>.Keys { places.users }

    /// Who is at `beacon` now.
    public func state(of beacon: String) -> BeaconState {
        BeaconState(beacon: beacon, users: occupants[beacon, default: []].sorted())
    }

    /// How many are at `beacon` now.
    public func count(at beacon: String) -> Int {
        occupants[beacon]?.count ?? 0
    }

    /// Where `user` is (at no beacon since a time), nil when the board holds nothing of them.
    public func place(of user: String) -> UserState? {
        places.state(of: user)
    }

    /// The reading of the enter that put `user` where they are, if it was seen since the start.
    public func reading(of user: String) -> Reading? {
        places.reading(of: user)
    }

    /// The users at a beacon, by key.
    public var present: [UserState] {
        places.users.sorted().compactMap { key in places.state(of: key).flatMap { $0.beacon == nil ? nil : $0 } }
    }

    /// Applies events in order: the final states of the users they touched, and the beacons they
    /// touched (sorted), whose states the caller makes when it publishes them (`state(of:)`).
    public mutating func record(_ events: [PresenceEvent]) -> (changes: Changes, beacons: [String]) {
        var touchedUsers: [String] = []
        var touchedBeacons: Set<String> = []
        var cleared: Set<String> = []
        for event in events {
            touchedUsers.append(event.user)
            touchedBeacons.insert(event.beacon)
            switch event.kind {
            case .enter:
                occupants[event.beacon, default: []].insert(event.user)
                let ranging = ranges ? Ranging(rssi: event.rssi, distance: event.distance, proximity: event.proximity ?? .unknown) : nil
                places.update(UserState(user: event.user, beacon: event.beacon, venue: event.venue, since: event.at, ranging: ranging))
                places.setReading(Reading(distance: event.distance, proximity: event.proximity), of: event.user)
                cleared.remove(event.user)
            case .exit:
                occupants[event.beacon]?.remove(event.user)
                places.setReading(nil, of: event.user)
                if event.reason == .incognito || event.reason == .removed {
                    places.remove(event.user)
                    cleared.insert(event.user)
                } else {
                    places.update(UserState(user: event.user, beacon: nil, venue: event.venue, since: event.at))
                }
            }
        }
        var changes = Changes()
        var seen: Set<String> = []
        for user in touchedUsers where seen.insert(user).inserted {
            if let state = places.state(of: user) { changes.users.append(state) } else if cleared.contains(user) { changes.clearedUsers.append(user) }
        }
        return (changes, touchedBeacons.sorted())
    }

    /// Records where a present user is estimated to be; returns their state to publish again when
    /// the position moved by `threshold` metres or more, or changed floor (nil otherwise).
    public mutating func place(_ user: String, at position: Position, threshold: Double = 1) -> UserState? {
        guard var state = places.state(of: user), state.beacon != nil else { return nil }
        if let previous = state.position {
            let moved = ((previous.x - position.x) * (previous.x - position.x) + (previous.y - position.y) * (previous.y - position.y)).squareRoot()
            guard moved >= threshold || previous.floor != position.floor else { return nil }
        }
        state.position = position
        places.update(state)
        return state
    }

    /// Records how near a present user is to their beacon; returns their state to publish again
    /// when the reading says something new (`Ranging.differs(from:)`), nil otherwise.
    public mutating func range(_ user: String, _ ranging: Ranging) -> UserState? {
        guard ranges, var state = places.state(of: user), state.beacon != nil, ranging.differs(from: state.ranging) else { return nil }
        state.ranging = ranging
        places.update(state)
        return state
    }

    /// Forgets a user without an event (`presencectl user forget`); returns the states of the
    /// beacons that listed them, to publish again.
    public mutating func forget(user: String) -> [BeaconState] {
        places.remove(user)
        var changed: [BeaconState] = []
        for beacon in occupants.keys.sorted() where occupants[beacon]?.remove(user) != nil {
            changed.append(state(of: beacon))
        }
        return changed
    }

    /// Forgets a beacon no longer registered; its retained state should be deleted.
    public mutating func forget(beacon: String) {
        occupants[beacon] = nil
    }
}
