/// Everything the aggregator decides, without I/O: batches are decoded and validated, sightings
/// matched to the registry, observations fed to the engine on a fixed tick grid behind a
/// watermark, and what was dropped is counted. The live aggregator and `replay` drive this same
/// value with the same inputs (payloads with their arrival times, and the clock), so they publish
/// the same events.
public struct PresencePipeline: Sendable {
    /// How the pipeline turns arrivals into decisions.
    public struct Configuration: Sendable, Equatable {
        public var engine = EngineConfiguration()
        /// How long to wait for late sightings before deciding on a moment (the watermark's lag), ms.
        public var lateness: Int64 = 1_000
        /// The engine decides at every multiple of this, ms.
        public var tickInterval: Int64 = 100
        /// A node whose clock is off by more than this, ms, has its timestamps corrected.
        public var skewThreshold: Int64 = 2_000
        /// A batch `sent` further ahead of its arrival than this, ms, is refused (`sent_ahead`):
        /// a node's clock that far fast, or a forged `sent`, never moves the node's clock estimate.
        public var maxSentAhead: Int64 = 600_000
        /// Whether nodes' RSSI offsets are fitted from their node beacons (`SelfCalibration`).
        public var selfCalibrate = false

        public init() {}
    }

    public let configuration: Configuration
    public internal(set) var engine: PresenceEngine
    public private(set) var registry: Registry
    public internal(set) var counters = PipelineCounters()
    /// The latest time the clock was moved to (arrival or tick), ms since the epoch.
    public private(set) var clock: Int64
    /// Each registered node's clock estimate, by node key.
    public private(set) var nodeClocks: [String: NodeClock] = [:]
    /// Messages from nodes that are not registered, counted, and the last few names.
    public internal(set) var strangers = StrangerNodes()
    /// The nodes' self-calibration, with `selfCalibrate`.
    public internal(set) var selfCalibration: SelfCalibration?
    /// The fleet's health, once `watchHealth(_:since:)` was called (the live aggregator).
    public internal(set) var fleet: FleetHealth?
    /// The shards whose users this pipeline decides for (`own(_:)`); nil: every shard.
    public private(set) var owned: ShardSet?
    /// While catching up (`catchUp(awaitingNodesHeardSince:)`), the nodes still awaited (perhaps
    /// none); nil: live.
    public private(set) var awaited: AwaitedNodes?
    /// The latest time a message taken in was dated to (a batch's arrival, its `sent` while
    /// catching up), ms: what `finish` decides up to while catching up.
    public internal(set) var takenUpTo: Int64
    /// The nodes messages are taken from: registered as nodes, or as `node:` devices.
    private var registeredNodes: Set<String>
    var matcher: ObservationMatcher
    private var nextTick: Int64
    /// Reused for every batch's scanned sightings.
    private var scratch: [SightingBatchDecoder.Scanned] = []
    /// Reused for every foreign report's canonical identity.
    var foreignIdentity = CanonicalIdentityBuffer()

    /// A pipeline whose clock starts at `start` (ms since the epoch); with `selfCalibrate`, the
    /// node offsets stored before (`storedOffsets`, by node key) apply from the start.
    public init(configuration: Configuration, registry: Registry, start: Int64, storedOffsets: [String: Double] = [:]) {
        let start = TimeBounds.clamped(start)
        self.configuration = configuration
        self.registry = registry
        if configuration.selfCalibrate { selfCalibration = SelfCalibration(registry: registry, start: start, seed: storedOffsets) }
        matcher = ObservationMatcher(registry: selfCalibration?.calibrated(registry) ?? registry)
        registeredNodes = Self.nodeKeys(of: registry)
        let tick = max(1, configuration.tickInterval)
        nextTick = (start / tick + 1) * tick
        clock = start
        takenUpTo = start
        engine = PresenceEngine(configuration: configuration.engine, now: start - configuration.lateness)
        engine.setPlaces(PlacePolicies(registry: registry))
        engine.setRegisteredUsers(registry.users.count)
    }

    /// Watches the fleet's health from `start` (ms, the wall clock) with `configuration`'s thresholds.
    public mutating func watchHealth(_ configuration: FleetHealth.Configuration, since start: Int64) {
        fleet = FleetHealth(configuration: configuration, registry: registry, start: TimeBounds.clamped(start))
        fleet?.own(owned)
    }

    /// Whether the pipeline is catching up: the clock moves with the backlog's own times.
    public var isCatchingUp: Bool { awaited != nil }

    /// From now on, until `goLive()`, the pipeline catches up with what was kept while the
    /// aggregator or its way in was down: a batch's arrival is taken as its `sent` time (bounded by
    /// the clock and its real arrival), so that the backlog is decided in its own time rather than
    /// all at once on arrival; nodes' status and stats no longer move the clock; and, given
    /// `since`, the native nodes whose last batch arrived at or after it are awaited
    /// (`AwaitedNodes`): the clock does not pass what they were heard up to until each is heard
    /// live again or given up. Returns how many nodes are awaited.
    @discardableResult
    public mutating func catchUp(awaitingNodesHeardSince since: Int64?) -> Int {
        var nodes: [String: Int64] = [:]
        if let since {
            for (node, nodeClock) in nodeClocks {
                if let arrival = nodeClock.lastArrival, arrival >= since { nodes[node] = arrival }
            }
        }
        awaited = AwaitedNodes(nodes)
        return nodes.count
    }

    /// Stops waiting for the nodes still awaited (the hold's bound passed); returns how many.
    @discardableResult
    public mutating func giveUpAwaitedNodes() -> Int {
        let count = awaited?.count ?? 0
        if awaited != nil { awaited = AwaitedNodes() }
        return count
    }

    /// Catching up is over: the clock moves with arrivals again (`advanceClock(to:)` brings it to now).
    public mutating func goLive() {
        awaited = nil
    }

    /// `time`, or the floor of the nodes awaited if that is earlier: where the clock may move.
    func heldAt(_ time: Int64) -> Int64 {
        min(time, awaited?.floor ?? .max)
    }

    /// A batch payload arrived on the sightings topic of `node` at `receivedAt`: the clock moves
    /// to its arrival first (returning what that decides), then its observations are taken in.
    /// Batches from nodes that are not registered, or whose topic segment is not a key, change
    /// nothing but the stranger counts.
    ///
    /// While catching up (`catchUp(awaitingNodesHeardSince:)`), the arrival is taken as the
    /// batch's `sent` time, bounded by the pipeline's clock and `receivedAt`, and the clock moves
    /// to it only as far as the nodes awaited allow, so that the backlog is decided in its own
    /// time rather than all at once now.
    /// The payload is read where it lies (the inbound message's bytes, a line of a recording).
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, node: Substring, at receivedAt: Int64) -> Outcome {
        let receivedAt = TimeBounds.clamped(receivedAt)
        let catchingUp = isCatchingUp
        counters.batches += 1
        if let reason = strangerReason(node) {
            strangers.record(node, reason: reason, at: receivedAt)
            return Outcome(events: catchingUp ? [] : advanceClock(to: receivedAt), refusal: .stranger(reason))
        }
        let key = String(node)
        var scanned = scratch
        scratch = []
        defer { scratch = scanned }
        let header: SightingBatchDecoder.Header
        switch SightingBatchDecoder.scan(bytes, topicNode: key, into: &scanned) {
        case .failure(let rejection):
            counters.rejectedBatches[rejection.reason, default: 0] += 1
            return Outcome(events: catchingUp ? [] : advanceClock(to: receivedAt), refusal: .invalid(rejection))
        case .success(let scannedHeader):
            header = scannedHeader
        }
        if TimeBounds.difference(header.sent, receivedAt) > configuration.maxSentAhead {
            let rejection = SightingBatchDecoder.Rejection.sentAhead(milliseconds: TimeBounds.difference(header.sent, receivedAt))
            counters.rejectedBatches[rejection.reason, default: 0] += 1
            return Outcome(events: catchingUp ? [] : advanceClock(to: receivedAt), refusal: .invalid(rejection))
        }
        let arrival = catchingUp ? min(receivedAt, max(clock, header.sent)) : receivedAt
        if catchingUp {
            let usualDelay = nodeClocks[key]?.offset ?? 0
            awaited?.heard(key, sentOnOurClock: TimeBounds.sum(header.sent, usualDelay), at: receivedAt, lateness: configuration.lateness)
        }
        var outcome = Outcome(events: advanceClock(to: heldAt(arrival)), droppedSightings: header.droppedSightings)
        takenUpTo = max(takenUpTo, arrival)
        if !catchingUp { nodeClocks[key, default: NodeClock()].observe(sent: header.sent, arrival: arrival) }
        engine.nodeHeard(key, at: arrival, heartbeat: false)
        fleet?.batch(from: key, at: arrival, sightings: scanned.count, clockOffset: nodeClocks[key]?.offset)
        let correction = nodeClocks[key]?.correction(threshold: configuration.skewThreshold) ?? 0
        counters.droppedSightings += header.droppedSightings
        counters.sightings += scanned.count
        let heardBy = matcher.node(key)
        // Read once per batch: its array is not retained again for every observation.
        let owned = owned
        for sighting in scanned {
            let time = min(TimeBounds.sum(sighting.ts, correction), arrival)
            // One lookup of the identity among the registered devices, for the health and the match.
            let device = matcher.device(sighting.id, in: bytes)
            fleet?.heard(device: device, sighting.id, in: bytes, at: time, telemetry: sighting.telemetry(in: bytes))
            ingest(sighting, device: device, in: bytes, heardBy: heardBy, node: key, at: time, owned: owned, into: &outcome)
        }
        if selfCalibration?.refit(at: arrival) != nil, let calibrated = selfCalibration?.calibrated(registry) {
            matcher = ObservationMatcher(registry: calibrated)
        }
        return outcome
    }

    /// Matches a sighting heard by `node` (`heardBy`) at `time`, `device` being the registered
    /// device it names, and feeds the engine the observation it makes when its user's shard is
    /// among `owned` (nil: every shard); what it cannot use goes to self-calibration or is counted.
    /// Returns the observation's shard, or nil when the sighting made none.
    @discardableResult
    mutating func ingest(_ sighting: SightingBatchDecoder.Scanned, device: Int?, in bytes: UnsafeRawBufferPointer, heardBy: ObservationMatcher.HearingNode?,
                         node key: String, at time: Int64, owned: ShardSet?, into outcome: inout Outcome) -> Int? {
        switch matcher.match(sighting, device: device, in: bytes, heardBy: heardBy, time: time) {
        case .success(let observation):
            if let owned, !owned.contains(observation.link.shard) {
                counters.otherShards += 1
                return observation.link.shard
            }
            counters.observations += 1
            outcome.observations += 1
            engine.ingest(observation)
            return observation.link.shard
        case .failure(let drop):
            if drop == .unregistered || drop == .unknownNode, selfCalibration?.take(sighting, in: bytes, heardBy: key) ?? false { return nil }
            counters.unmatched[drop.rawValue, default: 0] += 1
            return nil
        }
    }

    /// A node's stats (its heartbeat) arrived at `time`, stating `reportsPerSecond`.
    public mutating func receiveStats(node: Substring, at time: Int64, reportsPerSecond: Double? = nil) -> Outcome {
        let time = TimeBounds.clamped(time)
        if let reason = strangerReason(node) {
            strangers.record(node, reason: reason, at: time)
            return Outcome(events: isCatchingUp ? [] : advanceClock(to: time), refusal: .stranger(reason))
        }
        // While catching up they are not the backlog's: they take the clock's time, and do not move it.
        let events = isCatchingUp ? [] : advanceClock(to: time)
        engine.nodeHeard(String(node), at: min(time, clock), heartbeat: true)
        fleet?.stats(from: String(node), at: time, reportsPerSecond: reportsPerSecond)
        return Outcome(events: events)
    }

    /// A node's retained status arrived at `time`: offline (its will, or a clean stop) or online.
    public mutating func receiveStatus(node: Substring, online: Bool, at time: Int64) -> Outcome {
        let time = TimeBounds.clamped(time)
        if let reason = strangerReason(node) {
            strangers.record(node, reason: reason, at: time)
            return Outcome(events: isCatchingUp ? [] : advanceClock(to: time), refusal: .stranger(reason))
        }
        let events = isCatchingUp ? [] : advanceClock(to: time)
        engine.setNode(String(node), offline: !online, at: max(engine.now, min(time, clock) - configuration.lateness))
        fleet?.status(of: String(node), online: online, at: time)
        return Outcome(events: events)
    }

    /// Why a message from `node` is ignored, or nil for a registered node.
    private func strangerReason(_ node: Substring) -> StrangerNodes.Reason? {
        guard Slug.isValid(node) else { return .badNodeName }
        return isRegistered(node: String(node)) ? nil : .unregisteredNode
    }

    /// Whether messages from the node keyed `key` are taken.
    func isRegistered(node key: String) -> Bool {
        registeredNodes.contains(key)
    }

    /// The clock reached `time`: the engine decides at every grid tick up to it, each time on the
    /// observations older than the watermark (tick minus lateness).
    public mutating func advanceClock(to time: Int64) -> [PresenceEvent] {
        let time = TimeBounds.clamped(time)
        var events: [PresenceEvent] = []
        let tick = max(1, configuration.tickInterval)
        while nextTick <= time {
            // Ticks before the engine's next decision would decide nothing: skip to the first
            // tick whose watermark reaches it (or past `time`).
            let due = engine.nextDecisionTime.map { $0 + configuration.lateness } ?? .max
            if due > nextTick {
                let useful = due == .max ? .max : (due + tick - 1) / tick * tick
                if useful > time {
                    let last = time / tick * tick
                    engine.pass(to: last - configuration.lateness)
                    nextTick = last + tick
                    break
                }
                engine.pass(to: useful - tick - configuration.lateness)
                nextTick = useful
            }
            events += engine.advance(to: nextTick - configuration.lateness)
            nextTick += tick
        }
        clock = max(clock, time)
        counters.events += events.count
        return events
    }

    /// Swaps in a new registry at `time`: sessions of users, devices or beacons no longer
    /// registered end with `removed`, those of users now incognito with `incognito`. Users in
    /// `erasing` (forgotten) are dropped without an event. The node offsets self-calibration
    /// applies carry over.
    public mutating func replaceRegistry(_ newRegistry: Registry, at time: Int64, erasing: Set<String> = []) -> [PresenceEvent] {
        var events: [PresenceEvent] = []
        let at = max(time - configuration.lateness, engine.now)
        for user in erasing.sorted() {
            _ = engine.remove(user: user, at: at, reason: .removed)
        }
        for beacon in registry.beacons.keys.sorted() where newRegistry.beacons[beacon] == nil {
            events += engine.removeBeacon(beacon, at: at)
        }
        for device in registry.devices.keys.sorted() where newRegistry.devices[device]?.user != registry.devices[device]?.user {
            events += engine.removeDevice(device, at: at)
        }
        for (user, presence) in engine.presences.sorted(by: { $0.key < $1.key }) {
            if newRegistry.users[user] == nil || newRegistry.devices[presence.device] == nil {
                events += engine.remove(user: user, at: at, reason: .removed)
            } else if newRegistry.users[user]?.isIncognito(at: time) ?? false {
                events += engine.remove(user: user, at: at, reason: .incognito)
            }
        }
        registry = newRegistry
        selfCalibration = selfCalibration?.carried(to: newRegistry, at: time)
        matcher = ObservationMatcher(registry: selfCalibration?.calibrated(newRegistry) ?? newRegistry)
        engine.setPlaces(PlacePolicies(registry: newRegistry))
        engine.setRegisteredUsers(newRegistry.users.count)
        registeredNodes = Self.nodeKeys(of: newRegistry)
        nodeClocks = nodeClocks.filter { registeredNodes.contains($0.key) }
        engine.forgetNodes { !registeredNodes.contains($0) }
        fleet?.replaceRegistry(newRegistry, at: time)
        counters.events += events.count
        return events
    }

    /// The present users whose last sighting moved by `resolution` or more since it was last
    /// taken, among those heard after `mark` (see `PresenceEngine.takeLastSeen`).
    public mutating func takeLastSeen(touchedAfter mark: UInt64, resolution: Int64) -> [(user: String, time: Int64)] {
        engine.takeLastSeen(touchedAfter: mark, resolution: resolution)
    }

    /// From now on, decides only for users whose home shard is in `shards` (nil: every user); the
    /// observations of others are counted and dropped. Users of shards no longer owned should be
    /// dropped first (`drop(users:)`), users of new ones resumed (`resume(_:at:)`).
    public mutating func own(_ shards: ShardSet?) {
        owned = shards
        fleet?.own(shards)
    }

    /// Another aggregator's part of the fleet's health arrived (`FleetHealth.absorb(part:from:)`);
    /// nil when no health is watched.
    public mutating func absorbHealth(part payload: UnsafeRawBufferPointer, from name: String) -> Bool? {
        fleet?.absorb(part: payload, from: name)
    }

    /// Forgets `users` without an event: another aggregator decides for them now.
    public mutating func drop(users: Set<String>) {
        engine.drop(users: users)
    }

    /// Resumes sessions that were open when the aggregator stopped, except those whose user,
    /// device or beacon has gone or whose user is incognito: those end now, with the reason.
    public mutating func resume(_ sessions: [Presence], at time: Int64) -> [PresenceEvent] {
        var events: [PresenceEvent] = []
        let time = TimeBounds.clamped(time)
        for var session in sessions {
            session.entered = TimeBounds.clamped(session.entered)
            session.lastSeen = TimeBounds.clamped(session.lastSeen)
            engine.resume(session)
            let user = registry.users[session.user]
            let deviceKnown = registry.devices[session.device] != nil
            if user == nil || !deviceKnown || registry.beacons[session.beacon] == nil {
                events += engine.remove(user: session.user, at: max(time, session.entered), reason: .removed)
            } else if user?.isIncognito(at: time) ?? false {
                events += engine.remove(user: session.user, at: max(time, session.entered), reason: .incognito)
            }
        }
        counters.events += events.count
        return events
    }
}

extension PresencePipeline {
    /// What one message did: the events deciding up to its arrival produced, and what of it was
    /// refused or dropped.
    public struct Outcome: Sendable, Equatable {
        public var events: [PresenceEvent] = []
        /// Why the whole message was refused, if it was.
        public var refusal: Refusal?
        /// Sightings dropped alone for a missing or out-of-range value.
        public var droppedSightings = 0
        /// Sightings that became observations.
        public var observations = 0

        public init(events: [PresenceEvent] = [], refusal: Refusal? = nil, droppedSightings: Int = 0, observations: Int = 0) {
            self.events = events
            self.refusal = refusal
            self.droppedSightings = droppedSightings
            self.observations = observations
        }
    }

    /// Why a whole message was refused.
    public enum Refusal: Sendable, Equatable, CustomStringConvertible {
        /// A batch that breaks the contract.
        case invalid(SightingBatchDecoder.Rejection)
        /// A message from a node the registry does not know.
        case stranger(StrangerNodes.Reason)
        /// A foreign node's report that cannot be read.
        case foreign(ForeignRejection)

        /// A short stable name, for counters and logs.
        public var reason: String {
            switch self {
            case .invalid(let rejection): rejection.reason
            case .stranger(let reason): reason.rawValue
            case .foreign(let rejection): rejection.reason
            }
        }

        public var description: String {
            switch self {
            case .invalid(let rejection): rejection.description
            case .stranger(.badNodeName): "the topic's node segment is not a key"
            case .stranger(.unregisteredNode): "the node is not registered"
            case .foreign(let rejection): rejection.description
            }
        }
    }

    /// The keys of every node that may publish: registered nodes and scanners registered as devices.
    static func nodeKeys(of registry: Registry) -> Set<String> {
        var keys = Set(registry.nodes.keys)
        for identity in registry.devices.keys where identity.hasPrefix("node:") {
            keys.insert(String(identity.dropFirst(5)))
        }
        return keys
    }
}

/// What the pipeline has taken in and dropped, for the aggregator's stats and logs.
public struct PipelineCounters: Sendable, Equatable {
    /// Batches received, valid or not.
    public var batches = 0
    /// Whole batches rejected, by reason (`not_json`, `wrong_node`...).
    public var rejectedBatches: [String: Int] = [:]
    /// Sightings in accepted batches.
    public var sightings = 0
    /// Sightings dropped alone for a missing or out-of-range value.
    public var droppedSightings = 0
    /// Sightings that matched no registered device and beacon, by reason.
    public var unmatched: [String: Int] = [:]
    public var observations = 0
    /// Observations of users whose home shard another aggregator owns.
    public var otherShards = 0
    public var events = 0

    public init() {}
}
