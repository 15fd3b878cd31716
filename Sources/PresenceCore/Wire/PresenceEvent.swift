/// An enter or exit, as published on `{p}/v1/events/{beacon}/{user}` and printed by `replay`.
public struct PresenceEvent: Equatable, Sendable {
    public enum Kind: String, Sendable {
        case enter, exit
    }

    /// Why a session ended.
    public enum ExitReason: String, Sendable, CaseIterable {
        case moved, timeout, incognito, removed
    }

    public var kind: Kind
    /// Unique per event and stable across re-publication (derived from the event's content).
    public var id: String
    public var user: String
    public var device: String
    public var beacon: String
    public var venue: String?
    /// When it happened, ms since the Unix epoch.
    public var at: Int64
    // enter only
    public var rssi: Double?
    public var distance: Double?
    public var proximity: Proximity?
    // exit only
    public var entered: Int64?
    public var reason: ExitReason?

    /// Dwell time in seconds, for exits.
    public var dwell: Double? {
        entered.map { Double(at - $0) / 1000 }
    }

    public init(kind: Kind, id: String, user: String, device: String, beacon: String, venue: String?, at: Int64,
                rssi: Double? = nil, distance: Double? = nil, proximity: Proximity? = nil,
                entered: Int64? = nil, reason: ExitReason? = nil) {
        self.kind = kind
        self.id = id
        self.user = user
        self.device = device
        self.beacon = beacon
        self.venue = venue
        self.at = at
        self.rssi = rssi
        self.distance = distance
        self.proximity = proximity
        self.entered = entered
        self.reason = reason
    }

    /// The event as UTF-8 JSON.
    public func encoded() -> [UInt8] {
        var writer = JSONWriter()
        writer.object { w in
            w.eventHead(kind, id: id, user: user, device: device)
            w.member("beacon", beacon)
            w.key("venue")
            if let venue { w.string(venue) } else { w.null() }
            w.member("at", at)
            w.member("rssi", number: rssi, decimals: 1)
            w.member("distance", number: distance)
            w.member("proximity", proximity?.rawValue)
            w.eventTail(entered: entered, dwell: dwell, reason: reason)
        }
        return writer.bytes
    }
}

extension JSONWriter {
    /// The members every event (a beacon's or a zone's) begins with.
    mutating func eventHead(_ kind: PresenceEvent.Kind, id: String, user: String, device: String) {
        member("v", 1)
        member("event", kind.rawValue)
        member("id", id)
        member("user", user)
        member("device", device)
    }

    /// The members an exit ends with.
    mutating func eventTail(entered: Int64?, dwell: Double?, reason: PresenceEvent.ExitReason?) {
        member("entered", entered)
        member("dwell", number: dwell)
        member("reason", reason?.rawValue)
    }
}

/// How close a device is to a beacon, from the estimated distance.
public enum Proximity: String, Sendable, CaseIterable {
    case immediate, near, far, unknown

    /// The bucket of a distance in metres: immediate below 0.5 m, near below 3 m, far beyond.
    public init(distance: Double?) {
        guard let distance, distance.isFinite else {
            self = .unknown
            return
        }
        self = distance < 0.5 ? .immediate : distance < 3 ? .near : .far
    }
}
