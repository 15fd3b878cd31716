/// Home Assistant's MQTT discovery for the aggregator (`--ha-discovery`), a part of the core: from
/// the registry and the core's board of who is where, it says which retained messages make each
/// user a `device_tracker` (state: the beacon key, `not_home`, or `None` while incognito; attributes:
/// the beacon, its name, venue, distance and proximity of the enter, since), each beacon an
/// occupancy `sensor` that reads the beacon's retained state, and each zone a count `sensor` and an
/// occupancy `binary_sensor` that read the zone's. Only what changed is published again; a user,
/// beacon or zone the registry lost has its topics cleared with empty retained payloads, the
/// discovery config first. The core puts its messages in the same record as the states they
/// mirror, after them, so they survive a crash as those states do.
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
    /// The payload last published on each topic (empty ones are forgotten).
    private var published: [String: [UInt8]] = [:]
    /// The users and beacons whose topics hold something.
    private var users: Set<String> = []
    private var beacons: Set<String> = []
    private var zones: Set<String> = []

    /// Discovery with nothing published yet.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The registry is (or becomes) `registry` at `now`: users and beacons it lost are cleared,
    /// every config is published when new or changed, and every registered user's tracker says
    /// where `board` has them (hidden while incognito, `not_home` at no beacon). Sharing the venue,
    /// only the trackers of the users this aggregator `owns` are published, and the configs only
    /// with `configs` (by one aggregator, the one that publishes the beacons' states).
    public mutating func update(registry: Registry, board: PresenceBoard, at now: Int64, owns: (String) -> Bool = { _ in true },
                                configs: Bool = true) -> [OutboundMessage] {
        var messages: [OutboundMessage] = []
        let map = configs ? ZoneMap(registry: registry) : ZoneMap()
        if configs {
            for user in users.subtracting(registry.users.keys).sorted() {
                clear(configuration.topics.userTopics(user), into: &messages)
                users.remove(user)
            }
            for beacon in beacons.subtracting(registry.beacons.keys).sorted() {
                clear([configuration.topics.sensorConfig(beacon)], into: &messages)
                beacons.remove(beacon)
            }
            for zone in zones.subtracting(map.zones.keys).sorted() {
                clear([configuration.topics.zoneCountConfig(zone), configuration.topics.zoneOccupancyConfig(zone)], into: &messages)
                zones.remove(zone)
            }
        }
        for key in registry.users.keys.sorted() {
            if configs {
                users.insert(key)
                emit(configuration.topics.trackerConfig(key), trackerConfig(key, registry), into: &messages)
            }
            if owns(key) { publish(Self.place(of: key, registry: registry, board: board, events: [], at: now), of: key, registry, into: &messages) }
        }
        if configs {
            for key in registry.beacons.keys.sorted() {
                beacons.insert(key)
                emit(configuration.topics.sensorConfig(key), sensorConfig(key, registry), into: &messages)
            }
            for key in map.zones.keys.sorted() {
                zones.insert(key)
                emit(configuration.topics.zoneCountConfig(key), zoneConfig(key, map, occupancy: false), into: &messages)
                emit(configuration.topics.zoneOccupancyConfig(key), zoneConfig(key, map, occupancy: true), into: &messages)
            }
        }
        return messages
    }

    /// Forgets what was published of `users`' trackers (another aggregator publishes them now), so
    /// that they are published afresh if they come back.
    public mutating func forget(users gone: Set<String>) {
        for user in gone {
            published[configuration.topics.trackerState(user)] = nil
            published[configuration.topics.trackerAttributes(user)] = nil
        }
    }

    /// The trackers of `touched` users (registered ones) after `events`, as `board` has them at
    /// `now`: at their beacon, with the distance and proximity of their enter; `not_home` (since
    /// their exit, when one of `events`); `None` while incognito.
    public mutating func follow(_ touched: [String], events: [PresenceEvent], registry: Registry, board: PresenceBoard,
                                at now: Int64) -> [OutboundMessage] {
        var messages: [OutboundMessage] = []
        for user in touched where registry.users[user] != nil {
            publish(Self.place(of: user, registry: registry, board: board, events: events, at: now), of: user, registry, into: &messages)
        }
        return messages
    }

    static func place(of user: String, registry: Registry, board: PresenceBoard, events: [PresenceEvent], at now: Int64) -> Place {
        if registry.users[user]?.isIncognito(at: now) == true { return .hidden }
        guard let state = board.place(of: user) else { return .away(since: events.last { $0.user == user }?.at) }
        guard let beacon = state.beacon else { return .away(since: state.since) }
        let reading = board.reading(of: user)
        return .at(beacon: beacon, venue: state.venue, since: state.since, distance: reading?.distance, proximity: reading?.proximity)
    }

    private mutating func publish(_ place: Place, of user: String, _ registry: Registry, into messages: inout [OutboundMessage]) {
        emit(configuration.topics.trackerState(user), Self.state(place), into: &messages)
        emit(configuration.topics.trackerAttributes(user), attributes(place, registry), into: &messages)
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
