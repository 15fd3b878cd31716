/// A user entering or leaving a zone, as published on `{p}/v1/zones/events/{zone}/{user}`: a zone
/// is entered with the first beacon inside it and left with the last, at the same moment as that
/// beacon's event (`beacon`).
public struct ZoneEvent: Equatable, Sendable {
    public var kind: PresenceEvent.Kind
    /// Unique per event and stable across re-publication (derived from the event's content).
    public var id: String
    public var user: String
    public var device: String
    public var zone: String
    public var venue: String?
    /// The beacon whose enter or exit brought the zone's about.
    public var beacon: String
    /// When it happened, ms since the Unix epoch.
    public var at: Int64
    // exit only
    public var entered: Int64?
    public var reason: PresenceEvent.ExitReason?

    /// Dwell time in seconds, for exits.
    public var dwell: Double? {
        entered.map { Double(at - $0) / 1000 }
    }

    /// An event whose id is made from its content.
    public init(kind: PresenceEvent.Kind, user: String, device: String, zone: String, venue: String?, beacon: String, at: Int64,
                entered: Int64? = nil, reason: PresenceEvent.ExitReason? = nil) {
        let id = EventID.make(kind: kind, user: user, device: device, placePrefix: "zone:", place: zone, at: at, entered: entered)
        self.init(kind: kind, id: id, user: user, device: device, zone: zone, venue: venue, beacon: beacon, at: at, entered: entered, reason: reason)
    }

    public init(kind: PresenceEvent.Kind, id: String, user: String, device: String, zone: String, venue: String?, beacon: String, at: Int64,
                entered: Int64? = nil, reason: PresenceEvent.ExitReason? = nil) {
        self.kind = kind
        self.id = id
        self.user = user
        self.device = device
        self.zone = zone
        self.venue = venue
        self.beacon = beacon
        self.at = at
        self.entered = entered
        self.reason = reason
    }

    /// The event as UTF-8 JSON.
    public func encoded() -> [UInt8] {
        var writer = JSONWriter()
        writer.object { w in
            w.eventHead(kind, id: id, user: user, device: device)
            w.member("zone", zone)
            w.key("venue")
            if let venue { w.string(venue) } else { w.null() }
            w.member("beacon", beacon)
            w.member("at", at)
            w.eventTail(entered: entered, dwell: dwell, reason: reason)
        }
        return writer.bytes
    }
}

extension ZoneEvent {
    /// The event an `encoded()` payload holds (the journal keeps events as their payloads).
    public init(payload: [UInt8]) throws(PresenceEvent.Unreadable) {
        let fields = try EventFields(payload: payload)
        guard let kind = fields.kind, let id = fields.id, let user = fields.user, let device = fields.device, let zone = fields.zone,
              let beacon = fields.beacon, let at = fields.at else { throw PresenceEvent.Unreadable(reason: "a required member of a zone event is missing or unknown") }
        self.init(kind: kind, id: id, user: user, device: device, zone: zone, venue: fields.venue, beacon: beacon, at: at, entered: fields.entered,
                  reason: fields.reason)
    }
}

/// Who is in a zone now, retained on `{p}/v1/zones/state/{zone}`.
public struct ZoneState: Equatable, Sendable {
    public var zone: String
    /// User keys, sorted.
    public var users: [String]

    public init(zone: String, users: [String]) {
        self.zone = zone
        self.users = users
    }

    public func encoded() -> [UInt8] {
        var writer = JSONWriter()
        writer.object { w in
            w.member("v", 1)
            w.member("zone", zone)
            w.key("users")
            w.array { w in
                for user in users { w.string(user) }
            }
            w.member("count", users.count)
        }
        return writer.bytes
    }
}
