/// Who is in which zone, derived from beacon events: a user is in every zone their beacon lies in
/// (`ZoneMap`). A move between two beacons of a zone leaves the zone's stay open; leaving it ends
/// the stays innermost first, all at the beacon exit's moment. What the registry changes under
/// present users (a beacon put in another zone, a zone removed) is brought in line by
/// `reconcile`, whose exits say `removed`.
public struct ZonePresence: Sendable {
    /// The zone events a beacon event brings about: `before` go out just before it, `after` just
    /// after (a zone is entered before its beacon, and left after it).
    public struct Step: Sendable, Equatable {
        public var before: [ZoneEvent] = []
        public var after: [ZoneEvent] = []
    }

    public private(set) var map: ZoneMap
    /// Each user in a zone: where they are, and their stays, outermost first. One entry per user
    /// (about a hundred bytes and the stays'), so that a venue of 100,000 people in zones costs
    /// little; who is in a zone is read from the board (`AggregatorCore.zoneState(of:)`).
    private var occupants: [String: Occupant] = [:]

    private struct Occupant {
        /// The beacon the user is at, and the device and venue of the beacon event that put them there.
        var beacon: String
        var device: String
        var venue: String?
        var stays: [Stay]
    }

    private struct Stay {
        var zone: String
        var entered: Int64
    }

    public init(map: ZoneMap = ZoneMap()) {
        self.map = map
    }

    /// Whether nobody is in a zone and no beacon lies in one: beacon events then bring nothing about.
    public var isIdle: Bool { occupants.isEmpty && map.isEmpty }

    /// The zone events `events` bring about, one step per event (empty when idle). A `moved` exit
    /// followed by its user's enter ends only the zones the enter's beacon is not in, and the new
    /// beacon's zones are entered with that enter.
    public mutating func follow(_ events: [PresenceEvent]) -> [Step] {
        guard !isIdle else { return [] }
        var steps = Array(repeating: Step(), count: events.count)
        for (index, event) in events.enumerated() {
            switch event.kind {
            case .enter:
                let chain = map.zones(of: event.beacon)
                let place = Place(device: event.device, venue: event.venue, beacon: event.beacon)
                steps[index].before = move(event.user, to: chain, place: place, at: event.at, reason: .moved)
            case .exit:
                let next = events.index(after: index)
                if event.reason == .moved, next < events.endIndex, events[next].kind == .enter, events[next].user == event.user { continue }
                steps[index].after = move(event.user, to: [], place: Place(device: event.device, venue: event.venue, beacon: event.beacon),
                                          at: event.at, reason: event.reason ?? .removed)
            }
        }
        return steps
    }

    /// Swaps in the zones of a new registry.
    public mutating func replaceMap(_ map: ZoneMap) {
        self.map = map
    }

    /// Brings the stays of `users` (nil: everyone's) in line with where they are (`presences`, by
    /// user) at `at`: stays in zones their beacon is no longer in end (`removed`), zones it is now
    /// in are entered. Users in no presence leave every zone.
    public mutating func reconcile(_ presences: [String: Presence], users: Set<String>? = nil, at: Int64) -> [ZoneEvent] {
        guard !isIdle else { return [] }
        var events: [ZoneEvent] = []
        for user in (users ?? Set(occupants.keys).union(presences.keys)).sorted() {
            let presence = presences[user]
            let chain = presence.map { map.zones(of: $0.beacon) } ?? []
            let held = occupants[user]
            let place = presence.map { Place(device: $0.device, venue: $0.venue, beacon: $0.beacon) }
                ?? Place(device: held?.device ?? "", venue: held?.venue, beacon: held?.beacon ?? "")
            events += move(user, to: chain, place: place, at: max(at, presence?.entered ?? at), reason: .removed)
        }
        return events
    }

    /// Resumes open stays (a restart, a shard taken over) of users at `beacons` (by user), each
    /// user's ordered as their beacon's zones are; `reconcile` then ends what no longer holds.
    public mutating func resume(_ sessions: [ZoneSession], beacons: [String: String]) {
        for (user, sessions) in Dictionary(grouping: sessions, by: \.user) where occupants[user] == nil {
            let chain = beacons[user].map { map.zones(of: $0) } ?? []
            let ordered = sessions.sorted { lhs, rhs in
                let left = chain.firstIndex(of: lhs.zone) ?? -1, right = chain.firstIndex(of: rhs.zone) ?? -1
                return (left, lhs.entered, lhs.zone) < (right, rhs.entered, rhs.zone)
            }
            var stays: [Stay] = []
            for session in ordered where !stays.contains(where: { $0.zone == session.zone }) {
                stays.append(Stay(zone: session.zone, entered: session.entered))
            }
            let last = ordered.last
            occupants[user] = Occupant(beacon: beacons[user] ?? last?.zone ?? "", device: last?.device ?? "", venue: last?.venue, stays: stays)
        }
    }

    /// Forgets `users` without an event (forgotten, or another aggregator's now).
    public mutating func drop(users: Set<String>) {
        for user in users { occupants[user] = nil }
    }

    /// `user`'s open stays, outermost first.
    public func stays(of user: String) -> [ZoneSession] {
        guard let occupant = occupants[user] else { return [] }
        return occupant.stays.map { stay in
            ZoneSession(user: user, zone: stay.zone, device: occupant.device, venue: map.zones[stay.zone]?.venue ?? occupant.venue, entered: stay.entered)
        }
    }

    /// Every open stay, by user, each user's outermost first.
    public var openSessions: [ZoneSession] {
        occupants.keys.sorted().flatMap { stays(of: $0) }
    }

    /// Where a user's zone events come from.
    private struct Place {
        var device: String
        var venue: String?
        var beacon: String
    }

    /// Moves `user` into exactly the zones of `chain` (outermost first) at `at`: the stays that are
    /// not in it end innermost first with `reason`, then the new zones are entered outermost first.
    private mutating func move(_ user: String, to chain: [String], place: Place, at: Int64, reason: PresenceEvent.ExitReason) -> [ZoneEvent] {
        var occupant = occupants.removeValue(forKey: user) ?? Occupant(beacon: place.beacon, device: place.device, venue: place.venue, stays: [])
        defer { if !occupant.stays.isEmpty { occupants[user] = occupant } }
        let current = occupant.stays
        let (device, venue) = (occupant.device, occupant.venue)
        occupant.beacon = place.beacon
        occupant.device = place.device
        occupant.venue = place.venue
        guard current.count != chain.count || !zip(current, chain).allSatisfy({ $0.zone == $1 }) else { return [] }
        var events: [ZoneEvent] = []
        for stay in current.reversed() where !chain.contains(stay.zone) {
            events.append(ZoneEvent(kind: .exit, user: user, device: device, zone: stay.zone, venue: map.zones[stay.zone]?.venue ?? venue,
                                    beacon: place.beacon, at: max(at, stay.entered), entered: stay.entered, reason: reason))
        }
        var next: [Stay] = []
        next.reserveCapacity(chain.count)
        for zone in chain {
            if let stay = current.first(where: { $0.zone == zone }) {
                next.append(stay)
                continue
            }
            events.append(ZoneEvent(kind: .enter, user: user, device: place.device, zone: zone, venue: map.zones[zone]?.venue ?? place.venue,
                                    beacon: place.beacon, at: at))
            next.append(Stay(zone: zone, entered: at))
        }
        occupant.stays = next
        return events
    }
}
