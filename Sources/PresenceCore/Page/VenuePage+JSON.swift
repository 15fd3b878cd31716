/// The venue page's JSON, built only when a page asks (`AggregatorCore+Page`) or listens
/// (`PageUpdate.json`). Events on the page name the user and the beacon, never the device.
extension PageUpdate {
    /// The update's JSON, for the page's stream; nil for `snapshot`, which the core builds whole.
    public var json: [UInt8]? {
        var w = JSONWriter()
        switch self {
        case .event(let entry):
            VenuePageJSON.write(entry, &w)
        case .user(let state, let name):
            VenuePageJSON.write(state, name: name, &w)
        case .beacon(let state):
            w.object { w in
                w.member("beacon", state.beacon)
                w.member("count", state.users.count)
                w.key("users")
                w.array { w in for user in state.users { w.string(user) } }
            }
        case .nodes(let rows):
            VenuePageJSON.write(nodes: rows, &w)
        case .snapshot:
            return nil
        }
        return w.bytes
    }
}

/// The page's JSON values, each written the same wherever it appears.
enum VenuePageJSON {
    static func write(_ state: UserState, name: String?, _ w: inout JSONWriter) {
        w.object { w in
            w.member("user", state.user)
            w.member("name", name)
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
            if let ranging = state.ranging {
                w.member("distance", number: ranging.distance)
                w.member("proximity", ranging.proximity.rawValue)
            }
        }
    }

    /// An event for the page: who, where, when and why, but not the device.
    static func write(_ entry: FeedEntry, _ w: inout JSONWriter) {
        let event = entry.event
        w.object { w in
            w.member("cursor", entry.cursor)
            w.member("event", event.kind.rawValue)
            w.member("user", event.user)
            w.member("name", entry.name)
            w.member("beacon", event.beacon)
            w.member("beacon_name", entry.beaconName)
            w.member("venue", event.venue)
            w.member("at", event.at)
            w.member("distance", number: event.distance)
            w.member("proximity", event.proximity?.rawValue)
            w.member("reason", event.reason?.rawValue)
            w.member("dwell", number: event.dwell, decimals: 1)
        }
    }

    static func write(nodes rows: [NodeRow], _ w: inout JSONWriter) {
        w.object { w in
            w.member("v", 1)
            w.key("nodes")
            w.array { w in for row in rows { row.write(&w) } }
        }
    }
}

extension AggregatorCore {
    /// Everything the page draws, at `now`: the plan, who is where, the nodes and the last
    /// `events` events.
    public func pageSnapshotJSON(at now: Int64, events: Int = 50) -> [UInt8] {
        let registry = pipeline.registry
        var w = JSONWriter(capacity: 4096)
        w.object { w in
            w.member("v", 1)
            w.member("at", now)
            w.member("cursor", page?.cursor ?? 0)
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
                        w.member("count", beaconState(of: beacon.key).users.count)
                    }
                }
            }
            w.key("zones")
            w.array { w in
                for zone in zones.map.zones.values.sorted(by: { $0.key < $1.key }) {
                    w.object { w in
                        w.member("key", zone.key)
                        w.member("name", zone.name)
                        w.member("venue", zone.venue)
                        w.member("parent", zone.parent)
                        w.key("beacons")
                        w.array { w in for beacon in zones.map.beacons[zone.key] ?? [] { w.string(beacon) } }
                    }
                }
            }
            w.key("users")
            writePresentUsers(&w)
            w.key("nodes")
            w.array { w in for row in page?.nodes ?? [] { row.write(&w) } }
            w.key("events")
            w.array { w in
                for entry in page.map({ Array($0.feed.suffix(max(0, events))) }) ?? [] { VenuePageJSON.write(entry, &w) }
            }
        }
        return w.bytes
    }

    /// Who is where, and each beacon's and zone's occupancy.
    public func pagePresenceJSON(at now: Int64) -> [UInt8] {
        var w = JSONWriter(capacity: 1024)
        w.object { w in
            w.member("v", 1)
            w.member("at", now)
            w.key("users")
            writePresentUsers(&w)
            w.key("beacons")
            w.array { w in
                for key in pipeline.registry.beacons.keys.sorted() {
                    let present = beaconState(of: key).users
                    w.object { w in
                        w.member("beacon", key)
                        w.member("count", present.count)
                        w.key("users")
                        w.array { w in for user in present { w.string(user) } }
                    }
                }
            }
            w.key("zones")
            w.array { w in
                for key in zones.map.zones.keys.sorted() {
                    let present = zoneState(of: key).users
                    w.object { w in
                        w.member("zone", key)
                        w.member("count", present.count)
                        w.key("users")
                        w.array { w in for user in present { w.string(user) } }
                    }
                }
            }
        }
        return w.bytes
    }

    /// The events after `cursor` (at most `limit`, in the order decided, listed by time) and the
    /// cursor to ask from next. A cursor older than the feed keeps gets what the feed still holds.
    public func pageEventsJSON(after cursor: Int64, limit: Int) -> [UInt8] {
        let entries = page?.events(after: cursor, limit: limit) ?? []
        var w = JSONWriter(capacity: 1024)
        w.object { w in
            w.member("v", 1)
            w.member("cursor", entries.map(\.cursor).max() ?? max(cursor, 0))
            w.member("oldest", page?.feed.map(\.cursor).min())
            w.key("events")
            w.array { w in for entry in entries { VenuePageJSON.write(entry, &w) } }
        }
        return w.bytes
    }

    /// The registered nodes with their health.
    public func pageNodesJSON() -> [UInt8] {
        var w = JSONWriter(capacity: 1024)
        VenuePageJSON.write(nodes: page?.nodes ?? [], &w)
        return w.bytes
    }

    private func writePresentUsers(_ w: inout JSONWriter) {
        let registry = pipeline.registry
        w.array { w in
            // This aggregator's users, and (sharing the venue) the others' as their states say.
            let everyone = (board.present + others.present).sorted { $0.user < $1.user }
            for state in everyone { VenuePageJSON.write(state, name: registry.users[state.user]?.name, &w) }
        }
    }
}
