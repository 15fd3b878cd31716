import DequeModule
import PresenceCore

/// What the venue page shows, kept from the aggregator's records: the registry's places, who is
/// where, the recent events (each with a cursor, without device identities) and the nodes' health.
/// Pure: the aggregator feeds it records, registries and node rows with the time, and it answers
/// with the updates to stream and the JSON the page asks for.
public struct LiveBoard: Sendable {
    /// One change the page must hear about, as a server-sent event.
    public enum Update: Sendable, Equatable {
        /// An event of the feed, with its cursor.
        case event(cursor: Int64, json: [UInt8])
        /// A user's new place (or none).
        case user(json: [UInt8])
        /// A beacon's occupancy.
        case beacon(json: [UInt8])
        /// The nodes' health table.
        case nodes(json: [UInt8])
        /// Too much changed at once (registry, erasures): the page starts again from a snapshot.
        case snapshot
    }

    private var registry = Registry()
    private var users: [String: UserState] = [:]
    private var beacons: [String: BeaconState] = [:]
    private var nodeRows: [NodeRow] = []
    private var feed: Deque<FeedEntry> = []
    private var nextCursor: Int64 = 1
    private var flaps = FlapCounter()
    /// How many events the feed keeps.
    public let feedLimit: Int

    public init(feedLimit: Int = 500) {
        self.feedLimit = max(1, feedLimit)
    }

    /// Moves reversed within a minute since the start (see `FlapCounter`).
    public var flapCount: Int { flaps.count }

    /// The cursor of the newest event, 0 before the first.
    public var cursor: Int64 { nextCursor - 1 }

    /// Takes in what the aggregator decided; returns what the page must hear.
    public mutating func apply(_ record: OutboundRecord) -> [Update] {
        switch record {
        case .decided(let decided):
            var updates: [Update] = []
            for event in decided.events {
                flaps.observe(event)
                let entry = FeedEntry(cursor: nextCursor, event: event)
                nextCursor += 1
                feed.append(entry)
                if feed.count > feedLimit { feed.removeFirst() }
                updates.append(.event(cursor: entry.cursor, json: encode(entry)))
            }
            return updates + apply(decided.states)
        case .states(let changes):
            return apply(changes)
        case .erased(let forgotten):
            let gone = Set(forgotten)
            for user in gone { users[user] = nil }
            feed.removeAll { gone.contains($0.event.user) }
            flaps.forget(gone)
            for (key, state) in beacons where state.users.contains(where: gone.contains) {
                beacons[key]?.users.removeAll(where: gone.contains)
            }
            return [.snapshot]
        case .progress, .messages:
            return []
        }
    }

    /// A registry loaded: the plan may have changed, and users or beacons gone.
    public mutating func replaceRegistry(_ registry: Registry) -> [Update] {
        guard registry != self.registry else { return [] }
        self.registry = registry
        users = users.filter { registry.users[$0.key] != nil }
        beacons = beacons.filter { registry.beacons[$0.key] != nil }
        flaps.forget(Set(flaps.users).subtracting(registry.users.keys))
        return [.snapshot]
    }

    /// The nodes' latest health; an update only when it changed.
    public mutating func replaceNodes(_ rows: [NodeRow]) -> [Update] {
        guard rows != nodeRows else { return [] }
        nodeRows = rows
        return [.nodes(json: nodesJSON())]
    }

    private mutating func apply(_ changes: PresenceBoard.Changes) -> [Update] {
        var updates: [Update] = []
        for state in changes.users {
            users[state.user] = state
            updates.append(.user(json: encode(state)))
        }
        for user in changes.clearedUsers {
            users[user] = nil
            updates.append(.user(json: encode(UserState(user: user, beacon: nil, venue: nil, since: 0))))
        }
        for state in changes.beacons {
            beacons[state.beacon] = state
            updates.append(.beacon(json: encode(state)))
        }
        for beacon in changes.deletedBeacons where beacons.removeValue(forKey: beacon) != nil {
            updates.append(.snapshot)
        }
        return updates
    }
}

extension LiveBoard {
    /// Everything the page draws, at `now`: the plan, who is where, the nodes and the last
    /// `events` events.
    public func snapshotJSON(at now: Int64, events: Int = 50) -> [UInt8] {
        var w = JSONWriter(capacity: 4096)
        w.object { w in
            w.member("v", 1)
            w.member("at", now)
            w.member("cursor", cursor)
            writePlan(&w)
            w.key("users")
            writeUsers(&w)
            w.key("nodes")
            writeNodes(&w)
            w.key("events")
            w.array { w in
                for entry in feed.suffix(max(0, events)) { write(entry, &w) }
            }
        }
        return w.bytes
    }

    /// Who is where, and each beacon's occupancy.
    public func presenceJSON(at now: Int64) -> [UInt8] {
        var w = JSONWriter(capacity: 1024)
        w.object { w in
            w.member("v", 1)
            w.member("at", now)
            w.key("users")
            writeUsers(&w)
            w.key("beacons")
            w.array { w in
                for key in registry.beacons.keys.sorted() {
                    let present = beacons[key]?.users ?? []
                    w.object { w in
                        w.member("beacon", key)
                        w.member("count", present.count)
                        w.key("users")
                        w.array { w in for user in present { w.string(user) } }
                    }
                }
            }
        }
        return w.bytes
    }

    /// The events after `cursor` (at most `limit`, oldest first) and the cursor to ask from next.
    /// A cursor older than the feed keeps gets what the feed still holds.
    public func eventsJSON(after cursor: Int64, limit: Int) -> [UInt8] {
        let entries = feed.filter { $0.cursor > cursor }.prefix(max(0, limit))
        var w = JSONWriter(capacity: 1024)
        w.object { w in
            w.member("v", 1)
            w.member("cursor", entries.last?.cursor ?? max(cursor, 0))
            w.member("oldest", feed.first?.cursor)
            w.key("events")
            w.array { w in for entry in entries { write(entry, &w) } }
        }
        return w.bytes
    }

    /// The registered nodes with their health.
    public func nodesJSON() -> [UInt8] {
        var w = JSONWriter(capacity: 1024)
        w.object { w in
            w.member("v", 1)
            w.key("nodes")
            writeNodes(&w)
        }
        return w.bytes
    }

    private func writePlan(_ w: inout JSONWriter) {
        w.key("venues")
        w.array { w in
            for venue in registry.venues.values.sorted(by: { $0.key < $1.key }) {
                w.object { w in
                    w.member("key", venue.key)
                    w.member("name", venue.name)
                }
            }
        }
        w.key("beacons")
        w.array { w in
            for beacon in registry.beacons.values.sorted(by: { $0.key < $1.key }) {
                w.object { w in
                    w.member("key", beacon.key)
                    w.member("name", beacon.name)
                    w.member("venue", beacon.venue)
                    w.member("x", number: beacon.x)
                    w.member("y", number: beacon.y)
                    w.member("floor", beacon.floor)
                    w.member("count", beacons[beacon.key]?.users.count ?? 0)
                }
            }
        }
    }

    private func writeUsers(_ w: inout JSONWriter) {
        w.array { w in
            for key in users.keys.sorted() {
                if let state = users[key], state.beacon != nil { write(state, &w) }
            }
        }
    }

    private func writeNodes(_ w: inout JSONWriter) {
        w.array { w in for row in nodeRows { row.write(&w) } }
    }

    private func encode(_ entry: FeedEntry) -> [UInt8] {
        var w = JSONWriter()
        write(entry, &w)
        return w.bytes
    }

    private func encode(_ state: UserState) -> [UInt8] {
        var w = JSONWriter()
        write(state, &w)
        return w.bytes
    }

    private func encode(_ state: BeaconState) -> [UInt8] {
        var w = JSONWriter()
        w.object { w in
            w.member("beacon", state.beacon)
            w.member("count", state.users.count)
            w.key("users")
            w.array { w in for user in state.users { w.string(user) } }
        }
        return w.bytes
    }

    private func write(_ state: UserState, _ w: inout JSONWriter) {
        w.object { w in
            w.member("user", state.user)
            w.member("name", registry.users[state.user]?.name)
            w.key("beacon")
            if let beacon = state.beacon { w.string(beacon) } else { w.null() }
            w.member("venue", state.venue)
            w.member("since", state.since)
            if let position = state.position {
                w.key("position")
                w.object { w in
                    w.member("x", number: position.x)
                    w.member("y", number: position.y)
                    w.member("floor", position.floor)
                    w.member("accuracy", number: position.accuracy)
                }
            }
        }
    }

    /// An event for the page: who, where, when and why, but not the device.
    private func write(_ entry: FeedEntry, _ w: inout JSONWriter) {
        let event = entry.event
        w.object { w in
            w.member("cursor", entry.cursor)
            w.member("event", event.kind.rawValue)
            w.member("user", event.user)
            w.member("name", registry.users[event.user]?.name)
            w.member("beacon", event.beacon)
            w.member("beacon_name", registry.beacons[event.beacon]?.name)
            w.member("venue", event.venue)
            w.member("at", event.at)
            w.member("distance", number: event.distance)
            w.member("proximity", event.proximity?.rawValue)
            w.member("reason", event.reason?.rawValue)
            w.member("dwell", number: event.dwell, decimals: 1)
        }
    }
}

/// One event kept for the feed.
struct FeedEntry: Sendable, Equatable {
    let cursor: Int64
    let event: PresenceEvent
}
