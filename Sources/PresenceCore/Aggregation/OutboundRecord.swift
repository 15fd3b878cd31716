/// What the aggregator decided that must leave it, in the order decided: made durable, then
/// published and stored. Records are applied in order; each is published as a whole.
public enum OutboundRecord: Sendable, Equatable {
    /// Events decided together, the notifications they call for, and the retained states they change.
    case decided(DecidedEvents)
    /// Retained states to publish that no event carries (start-up, registry changes, positions).
    case states(PresenceBoard.Changes)
    /// How far decisions have gone, and the last sightings of present users.
    case progress(Progress)
    /// Users forgotten (`presencectl user forget`): whatever the database holds of them, stored
    /// by records before this one included, is deleted again. Publishes nothing.
    case erased(users: [String])
    /// Messages made beside the decisions (Home Assistant discovery, `HomeAssistantDiscovery`),
    /// published as they are, in order. Stores nothing.
    case messages([OutboundMessage])

    /// Events with what follows from them.
    public struct DecidedEvents: Sendable, Equatable {
        public var events: [PresenceEvent]
        public var notifications: [PresenceNotification]
        public var states: PresenceBoard.Changes
        /// When they were decided (the wall clock of the message or tick that decided them), ms.
        public var decidedAt: Int64

        public init(events: [PresenceEvent], notifications: [PresenceNotification], states: PresenceBoard.Changes, decidedAt: Int64) {
            self.events = events
            self.notifications = notifications
            self.states = states
            self.decidedAt = decidedAt
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

    /// The MQTT messages the record publishes, in order: events, notifications, then states.
    public func messages(_ topics: Topics) -> [OutboundMessage] {
        switch self {
        case .decided(let decided):
            decided.events.map { OutboundMessage(topic: topics.event(beacon: $0.beacon, user: $0.user), payload: $0.encoded(), event: $0.id) }
                + decided.notifications.map { OutboundMessage(topic: topics.notify(user: $0.user), payload: $0.encoded()) }
                + decided.states.messages(topics)
        case .states(let changes):
            changes.messages(topics)
        case .messages(let messages):
            messages
        case .progress, .erased:
            []
        }
    }
}

/// One message to publish with QoS 1: retained for states (an empty retained payload deletes
/// the state), with the id of the event it carries, if any.
public struct OutboundMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var retain: Bool
    public var event: String?

    public init(topic: String, payload: [UInt8], retain: Bool = false, event: String? = nil) {
        self.topic = topic
        self.payload = payload
        self.retain = retain
        self.event = event
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
