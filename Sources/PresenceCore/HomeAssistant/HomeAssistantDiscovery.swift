/// Home Assistant's MQTT discovery for the aggregator (`--ha-discovery`), without I/O. From the
/// registry and the records the core makes, it says which retained messages make each user a
/// `device_tracker` (state: the beacon key, `not_home`, or `None` while incognito; attributes: the
/// beacon, its name, venue, distance, proximity, since) and each beacon an occupancy `sensor` that
/// reads the beacon's retained state. Only what changed is published again; a user or beacon the
/// registry lost has its topics cleared with empty retained payloads, the discovery config first.
///
/// The shell calls `follow(_:at:)` with every record the core makes (the resumed states first),
/// and `update(registry:at:)` at the start and before the core sees each new registry; the
/// messages both return go into the journal after the record, so they survive a crash as the
/// retained states they mirror do.
public struct HomeAssistantDiscovery: Sendable {
    /// Where the messages go.
    public struct Configuration: Sendable, Equatable {
        /// Home Assistant's discovery topics (`--ha-prefix`).
        public var topics: HomeAssistantTopics
        /// The pipeline's topics: availability follows `{p}/v1/aggregator/status`, and a beacon's
        /// sensor reads `{p}/v1/state/beacons/{beacon}`.
        public var pipeline: Topics

        public init(topics: HomeAssistantTopics, pipeline: Topics) {
            self.topics = topics
            self.pipeline = pipeline
        }
    }

    /// What a user's tracker shows.
    enum Place: Equatable, Sendable {
        /// At a beacon since a time (ms), with the distance (m) and proximity of the enter.
        case at(beacon: String, venue: String?, since: Int64, distance: Double?, proximity: Proximity?)
        /// At no beacon, since a time when known.
        case away(since: Int64?)
        /// Incognito: Home Assistant is told nothing (`None`, its reset payload: unknown).
        case hidden
    }

    public let configuration: Configuration
    private(set) var registry: Registry
    private(set) var places: [String: Place] = [:]
    /// The payload last published on each topic (empty ones are forgotten).
    private var published: [String: [UInt8]] = [:]
    /// The users and beacons whose topics hold something.
    private var users: Set<String> = []
    private var beacons: Set<String> = []

    /// Discovery for `registry`, with nothing published yet.
    public init(configuration: Configuration, registry: Registry) {
        self.configuration = configuration
        self.registry = registry
    }

    /// The registry is (or becomes) `registry` at `now`: users and beacons it lost are cleared,
    /// every config is published when new or changed, users now incognito are hidden, and users
    /// with no state yet (or no longer incognito) are `not_home`.
    public mutating func update(registry: Registry, at now: Int64) -> [OutboundMessage] {
        self.registry = registry
        var messages: [OutboundMessage] = []
        for user in users.subtracting(registry.users.keys).sorted() {
            clear(configuration.topics.userTopics(user), into: &messages)
            users.remove(user)
            places[user] = nil
        }
        for beacon in beacons.subtracting(registry.beacons.keys).sorted() {
            clear([configuration.topics.sensorConfig(beacon)], into: &messages)
            beacons.remove(beacon)
        }
        for (key, user) in registry.users.sorted(by: { $0.key < $1.key }) {
            if user.isIncognito(at: now) {
                places[key] = .hidden
            } else if places[key] == nil || places[key] == .hidden {
                places[key] = .away(since: nil)
            }
            users.insert(key)
            emit(configuration.topics.trackerConfig(key), trackerConfig(key), into: &messages)
            publishPlace(of: key, into: &messages)
        }
        for key in registry.beacons.keys.sorted() {
            beacons.insert(key)
            emit(configuration.topics.sensorConfig(key), sensorConfig(key), into: &messages)
        }
        return messages
    }

    /// The trackers' states and attributes that `record` changes, for registered users: a user
    /// state becomes the beacon (with the distance and proximity of the enter that put them
    /// there) or `not_home`; a deleted one `None` while the user is incognito at `now`, else
    /// `not_home`. Users the registry lost were cleared by `update` and stay so.
    public mutating func follow(_ record: OutboundRecord, at now: Int64) -> [OutboundMessage] {
        let changes: PresenceBoard.Changes
        let events: [PresenceEvent]
        switch record {
        case .decided(let decided): (changes, events) = (decided.states, decided.events)
        case .states(let states): (changes, events) = (states, [])
        case .progress, .erased, .messages: return []
        }
        var messages: [OutboundMessage] = []
        for state in changes.users where registry.users[state.user] != nil {
            places[state.user] = place(state, events: events)
            publishPlace(of: state.user, into: &messages)
        }
        for user in changes.clearedUsers {
            guard let registered = registry.users[user] else { continue }
            places[user] = registered.isIncognito(at: now) ? .hidden : .away(since: events.last { $0.user == user }?.at)
            publishPlace(of: user, into: &messages)
        }
        return messages
    }

    private func place(_ state: UserState, events: [PresenceEvent]) -> Place {
        guard let beacon = state.beacon else { return .away(since: state.since) }
        if let enter = events.last(where: { $0.user == state.user && $0.kind == .enter && $0.beacon == beacon }) {
            return .at(beacon: beacon, venue: state.venue, since: state.since, distance: enter.distance, proximity: enter.proximity)
        }
        // A state without its enter (a position, a restart) keeps what the enter said.
        if case .at(beacon, _, state.since, let distance, let proximity)? = places[state.user] {
            return .at(beacon: beacon, venue: state.venue, since: state.since, distance: distance, proximity: proximity)
        }
        return .at(beacon: beacon, venue: state.venue, since: state.since, distance: nil, proximity: nil)
    }

    private mutating func publishPlace(of user: String, into messages: inout [OutboundMessage]) {
        guard let place = places[user] else { return }
        emit(configuration.topics.trackerState(user), Self.state(place), into: &messages)
        emit(configuration.topics.trackerAttributes(user), attributes(place), into: &messages)
    }

    /// Publishes `payload` on `topic`, retained, unless it is there already.
    private mutating func emit(_ topic: String, _ payload: [UInt8], into messages: inout [OutboundMessage]) {
        guard published[topic] != payload else { return }
        published[topic] = payload
        messages.append(OutboundMessage(topic: topic, payload: payload, retain: true))
    }

    /// Deletes the retained messages on `topics`, in order.
    private mutating func clear(_ topics: [String], into messages: inout [OutboundMessage]) {
        for topic in topics {
            published[topic] = nil
            messages.append(OutboundMessage(topic: topic, payload: [], retain: true))
        }
    }
}
