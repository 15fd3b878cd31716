/// What the aggregator decided that must leave it, in the order decided: made durable, then
/// published and stored. Records are applied in order; each is published as a whole.
public enum OutboundRecord: Sendable, Equatable {
    /// Messages to publish, each encoded once when decided, with what the database keeps of them.
    case decided(Decided)
    /// How far decisions have gone, and the last sightings of present users.
    case progress(Progress)
    /// Users forgotten (`presencectl user forget`): whatever the database holds of them, stored
    /// by records before this one included, is deleted again. Publishes nothing.
    case erased(users: [String])

    /// Messages in the order they are published: events, the notifications they call for, the
    /// retained states they change, then Home Assistant's. An event's message carries the event;
    /// its payload is what the broker carries and the database stores.
    public struct Decided: Sendable, Equatable {
        public var messages: [OutboundMessage]
        /// The hellos and goodbyes among the messages, as the database keeps them.
        public var notifications: [PresenceNotification]
        /// When they were decided (the wall clock of the message or tick that decided them), ms.
        public var decidedAt: Int64
        /// Whether the messages go out only once the database holds the record: decided while
        /// other aggregators shared the venue, one of which may take these users over from the
        /// database and must not miss what was published (a second enter).
        public var publishOnceStored: Bool

        public init(messages: [OutboundMessage], notifications: [PresenceNotification] = [], decidedAt: Int64, publishOnceStored: Bool = false) {
            self.messages = messages
            self.notifications = notifications
            self.decidedAt = decidedAt
            self.publishOnceStored = publishOnceStored
        }

        /// The events among the messages, in order.
        public var events: [PresenceEvent] {
            messages.compactMap(\.event)
        }

        /// The zone events among the messages, in order.
        public var zoneEvents: [ZoneEvent] {
            messages.compactMap(\.zoneEvent)
        }
    }

    /// The decided-up-to clock and present users' last sightings, to save.
    public struct Progress: Sendable, Equatable {
        public var clock: Int64
        public var lastSeen: [LastSeen]

        public init(clock: Int64, lastSeen: [LastSeen]) {
            self.clock = clock
            self.lastSeen = lastSeen
        }
    }

    /// A present user's last qualifying sighting, ms.
    public struct LastSeen: Sendable, Equatable {
        public var user: String
        public var time: Int64

        public init(user: String, time: Int64) {
            self.user = user
            self.time = time
        }
    }
}

/// One message to publish with QoS 1: retained for states (an empty retained payload deletes the
/// state); an event's message carries the event (or zone event), whose JSON its payload is.
public struct OutboundMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var retain: Bool
    public var event: PresenceEvent?
    public var zoneEvent: ZoneEvent?

    public init(topic: String, payload: [UInt8], retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.retain = retain
        event = nil
        zoneEvent = nil
    }

    /// `event`'s message on `topics`, its JSON encoded here, once.
    public init(_ event: PresenceEvent, _ topics: Topics) {
        self.init(topic: topics.event(beacon: event.beacon, user: event.user), payload: event.encoded())
        self.event = event
    }

    /// `event`'s message on `topics`, its JSON encoded here, once.
    public init(_ event: ZoneEvent, _ topics: Topics) {
        self.init(topic: topics.zoneEvent(zone: event.zone, user: event.user), payload: event.encoded())
        zoneEvent = event
    }

    /// A message read back from the journal: an event's payload gives back its event.
    public init(topic: String, payload: [UInt8], retain: Bool, carriesEvent: Bool, carriesZoneEvent: Bool = false) throws(PresenceEvent.Unreadable) {
        self.init(topic: topic, payload: payload, retain: retain)
        if carriesEvent { event = try PresenceEvent(payload: payload) }
        if carriesZoneEvent { zoneEvent = try ZoneEvent(payload: payload) }
    }
}

extension PresenceBoard.Changes {
    /// The retained messages: user states, deleted user states, beacon states, deleted beacon states.
    public func messages(_ topics: Topics) -> [OutboundMessage] {
        users.map { OutboundMessage(topic: topics.userState($0.user), payload: $0.encoded(), retain: true) }
            + clearedUsers.map { OutboundMessage(topic: topics.userState($0), payload: [], retain: true) }
            + beacons.map { OutboundMessage(topic: topics.beaconState($0.beacon), payload: $0.encoded(), retain: true) }
            + deletedBeacons.map { OutboundMessage(topic: topics.beaconState($0), payload: [], retain: true) }
    }
}
