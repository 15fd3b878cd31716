/// What a restarted aggregator starts from when its journal holds records the database has not
/// taken yet (it was away, or the aggregator died first): the sessions, zone stays, clock, last
/// sightings and notifications the database says, with those records laid over them in order. Laying a record
/// the database already took over it changes nothing, so a fold from any earlier point is right.
public struct JournalFold: Sendable, Equatable {
    public private(set) var sessions: [String: Presence]
    public private(set) var clock: Int64?
    /// The open zone stays, by user and zone.
    private var zoneStays: [ZoneKey: ZoneSession]
    /// The latest hello and goodbye of each user at each beacon.
    private var latest: [String: PresenceNotification] = [:]

    private struct ZoneKey: Hashable {
        var user: String
        var zone: String
    }

    public init(sessions: [Presence], zoneSessions: [ZoneSession] = [], clock: Int64?, notifications: [PresenceNotification]) {
        self.sessions = Dictionary(sessions.map { ($0.user, $0) }, uniquingKeysWith: { $1 })
        zoneStays = Dictionary(zoneSessions.map { (ZoneKey(user: $0.user, zone: $0.zone), $0) }, uniquingKeysWith: { $1 })
        self.clock = clock
        remember(notifications)
    }

    /// Lays `record` over what is known.
    public mutating func apply(_ record: OutboundRecord) {
        switch record {
        case .decided(let decided):
            for event in decided.events {
                switch event.kind {
                case .enter:
                    sessions[event.user] = Presence(user: event.user, device: event.device, beacon: event.beacon, venue: event.venue,
                                                    entered: event.at, lastSeen: event.at)
                case .exit:
                    if sessions[event.user]?.beacon == event.beacon { sessions[event.user] = nil }
                }
            }
            for event in decided.zoneEvents {
                let key = ZoneKey(user: event.user, zone: event.zone)
                switch event.kind {
                case .enter:
                    zoneStays[key] = ZoneSession(user: event.user, zone: event.zone, device: event.device, venue: event.venue, entered: event.at)
                case .exit:
                    zoneStays[key] = nil
                }
            }
            remember(decided.notifications)
        case .progress(let progress):
            clock = max(clock ?? .min, progress.clock)
            for seen in progress.lastSeen {
                if let lastSeen = sessions[seen.user]?.lastSeen, seen.time > lastSeen { sessions[seen.user]?.lastSeen = seen.time }
            }
        case .erased(let users):
            let forgotten = Set(users)
            for user in users { sessions[user] = nil }
            zoneStays = zoneStays.filter { !forgotten.contains($0.key.user) }
            latest = latest.filter { !forgotten.contains($0.value.user) }
        }
    }

    private mutating func remember(_ notifications: [PresenceNotification]) {
        for notification in notifications {
            let key = "\(notification.user) \(notification.beacon) \(notification.kind.rawValue)"
            if notification.at >= latest[key]?.at ?? .min { latest[key] = notification }
        }
    }

    /// The notifications sent, the latest of each user, beacon and kind.
    public var notifications: [PresenceNotification] {
        latest.values.sorted { ($0.at, $0.user, $0.beacon) < ($1.at, $1.user, $1.beacon) }
    }

    /// The open sessions, by user.
    public var openSessions: [Presence] {
        sessions.values.sorted { $0.user < $1.user }
    }

    /// The open zone stays, by user and entry.
    public var openZoneSessions: [ZoneSession] {
        zoneStays.values.sorted { ($0.user, $0.entered, $0.zone) < ($1.user, $1.entered, $1.zone) }
    }
}
