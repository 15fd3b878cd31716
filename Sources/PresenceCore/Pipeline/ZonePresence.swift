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
    /// Each user's open stays, outermost first.
    private var stays: [String: [ZoneSession]] = [:]
    /// The users in each zone.
    private var occupants: [String: Set<String>] = [:]
    /// The beacon each user in a zone is at.
    private var beacons: [String: String] = [:]

    public init(map: ZoneMap = ZoneMap()) {
        self.map = map
    }

    /// Whether nobody is in a zone and no beacon lies in one: beacon events then bring nothing about.
    public var isIdle: Bool { stays.isEmpty && map.isEmpty }

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
        for user in (users ?? Set(stays.keys).union(presences.keys)).sorted() {
            let presence = presences[user]
            let chain = presence.map { map.zones(of: $0.beacon) } ?? []
            let place = presence.map { Place(device: $0.device, venue: $0.venue, beacon: $0.beacon) }
                ?? Place(device: stays[user]?.last?.device ?? "", venue: nil, beacon: beacons[user] ?? stays[user]?.last?.zone ?? "")
            events += move(user, to: chain, place: place, at: max(at, presence?.entered ?? at), reason: .removed)
        }
        return events
    }

    /// Resumes open stays (a restart, a shard taken over), each user's ordered as their beacon's
    /// zones are; `reconcile` then ends what no longer holds.
    public mutating func resume(_ sessions: [ZoneSession], beacons: [String: String]) {
        for (user, sessions) in Dictionary(grouping: sessions, by: \.user) {
            if let beacon = beacons[user] { self.beacons[user] = beacon }
            let chain = beacons[user].map { map.zones(of: $0) } ?? []
            let ordered = sessions.sorted { lhs, rhs in
                let left = chain.firstIndex(of: lhs.zone) ?? -1, right = chain.firstIndex(of: rhs.zone) ?? -1
                return (left, lhs.entered, lhs.zone) < (right, rhs.entered, rhs.zone)
            }
            for session in ordered where !(stays[user]?.contains { $0.zone == session.zone } ?? false) {
                stays[user, default: []].append(session)
                occupants[session.zone, default: []].insert(user)
            }
        }
    }

    /// Forgets `users` without an event (forgotten, or another aggregator's now).
    public mutating func drop(users: Set<String>) {
        for user in users {
            for stay in stays.removeValue(forKey: user) ?? [] { leave(stay.zone, user) }
            beacons[user] = nil
        }
    }

    /// `user`'s open stays, outermost first.
    public func stays(of user: String) -> [ZoneSession] {
        stays[user] ?? []
    }

    /// Every open stay, by user, each user's outermost first.
    public var openSessions: [ZoneSession] {
        stays.keys.sorted().flatMap { stays[$0] ?? [] }
    }

    /// Who is in `zone` now, sorted.
    public func users(in zone: String) -> [String] {
        occupants[zone]?.sorted() ?? []
    }

    /// How many are in `zone` now.
    public func count(in zone: String) -> Int {
        occupants[zone]?.count ?? 0
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
        beacons[user] = chain.isEmpty ? nil : place.beacon
        let current = stays[user] ?? []
        guard current.count != chain.count || !zip(current, chain).allSatisfy({ $0.zone == $1 }) else { return [] }
        var events: [ZoneEvent] = []
        var kept: [ZoneSession] = []
        for stay in current where chain.contains(stay.zone) { kept.append(stay) }
        for stay in current.reversed() where !chain.contains(stay.zone) {
            events.append(ZoneEvent(kind: .exit, user: user, device: stay.device, zone: stay.zone, venue: stay.venue, beacon: place.beacon,
                                    at: max(at, stay.entered), entered: stay.entered, reason: reason))
            leave(stay.zone, user)
        }
        var next: [ZoneSession] = []
        for zone in chain {
            if let stay = kept.first(where: { $0.zone == zone }) {
                next.append(stay)
                continue
            }
            let venue = map.zones[zone]?.venue ?? place.venue
            events.append(ZoneEvent(kind: .enter, user: user, device: place.device, zone: zone, venue: venue, beacon: place.beacon, at: at))
            next.append(ZoneSession(user: user, zone: zone, device: place.device, venue: venue, entered: at))
            occupants[zone, default: []].insert(user)
        }
        stays[user] = next.isEmpty ? nil : next
        return events
    }

    private mutating func leave(_ zone: String, _ user: String) {
        occupants[zone]?.remove(user)
        if occupants[zone]?.isEmpty == true { occupants[zone] = nil }
    }
}
