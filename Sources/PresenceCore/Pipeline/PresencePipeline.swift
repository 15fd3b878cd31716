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

        public init() {}
    }

    public let configuration: Configuration
    public private(set) var engine: PresenceEngine
    public private(set) var registry: Registry
    public private(set) var counters = PipelineCounters()
    /// The latest time the clock was moved to (arrival or tick), ms since the epoch.
    public private(set) var clock: Int64
    /// Each node's clock estimate, by node key.
    public private(set) var nodeClocks: [String: NodeClock] = [:]
    private var matcher: ObservationMatcher
    private var nextTick: Int64
    /// Reused for every batch's scanned sightings.
    private var scratch: [SightingBatchDecoder.Scanned] = []

    /// A pipeline whose clock starts at `start` (ms since the epoch).
    public init(configuration: Configuration, registry: Registry, start: Int64) {
        self.configuration = configuration
        self.registry = registry
        matcher = ObservationMatcher(registry: registry)
        let tick = max(1, configuration.tickInterval)
        nextTick = (start / tick + 1) * tick
        clock = start
        engine = PresenceEngine(configuration: configuration.engine, now: start - configuration.lateness)
    }

    /// A batch payload arrived on the sightings topic of `node` at `receivedAt`: the clock moves
    /// to its arrival first (returning what that decides), then its observations are taken in.
    ///
    /// While `catchingUp` (a restart draining what the broker kept during the downtime), the
    /// arrival is taken as the batch's `sent` time, bounded by the pipeline's clock and
    /// `receivedAt`, so that the backlog is decided in its own time rather than all at once now.
    public mutating func receive(_ payload: [UInt8], node: String, at receivedAt: Int64, catchingUp: Bool = false) -> [PresenceEvent] {
        payload.withUnsafeBytes { receive($0, node: node, at: receivedAt, catchingUp: catchingUp) }
    }

    /// `receive(_:node:at:catchingUp:)` for a payload that stays where it is (a line of a recording).
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, node: String, at receivedAt: Int64, catchingUp: Bool = false) -> [PresenceEvent] {
        counters.batches += 1
        var scanned = scratch
        scratch = []
        defer { scratch = scanned }
        let header: SightingBatchDecoder.Header
        switch SightingBatchDecoder.scan(bytes, topicNode: node, into: &scanned) {
        case .failure(let rejection):
            counters.rejectedBatches[rejection.reason, default: 0] += 1
            lastRejection = rejection
            return catchingUp ? [] : advanceClock(to: receivedAt)
        case .success(let scannedHeader):
            header = scannedHeader
        }
        let arrival = catchingUp ? min(receivedAt, max(clock, header.sent)) : receivedAt
        let events = advanceClock(to: arrival)
        if !catchingUp { nodeClocks[node, default: NodeClock()].observe(sent: header.sent, arrival: arrival) }
        engine.nodeHeard(node, at: arrival, heartbeat: false)
        let correction = nodeClocks[node]?.correction(threshold: configuration.skewThreshold) ?? 0
        counters.droppedSightings += header.droppedSightings
        counters.sightings += scanned.count
        let heardBy = matcher.node(node)
        for sighting in scanned {
            switch matcher.match(sighting, in: bytes, heardBy: heardBy, time: min(sighting.ts + correction, arrival)) {
            case .success(let observation):
                counters.observations += 1
                engine.ingest(observation)
            case .failure(let drop):
                counters.unmatched[drop.rawValue, default: 0] += 1
            }
        }
        return events
    }

    /// A node's stats (its heartbeat) arrived at `time`.
    public mutating func receiveStats(node: String, at time: Int64) -> [PresenceEvent] {
        let events = advanceClock(to: time)
        engine.nodeHeard(node, at: time, heartbeat: true)
        return events
    }

    /// A node's retained status arrived at `time`: offline (its will, or a clean stop) or online.
    public mutating func receiveStatus(node: String, online: Bool, at time: Int64) -> [PresenceEvent] {
        let events = advanceClock(to: time)
        engine.setNode(node, offline: !online, at: max(engine.now, time - configuration.lateness))
        return events
    }

    /// Why the last rejected batch was rejected, for logs.
    public private(set) var lastRejection: SightingBatchDecoder.Rejection?

    /// The clock reached `time`: the engine decides at every grid tick up to it, each time on the
    /// observations older than the watermark (tick minus lateness).
    public mutating func advanceClock(to time: Int64) -> [PresenceEvent] {
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
    /// registered end with `removed`, those of users now incognito with `incognito`.
    public mutating func replaceRegistry(_ newRegistry: Registry, at time: Int64) -> [PresenceEvent] {
        var events: [PresenceEvent] = []
        let at = max(time - configuration.lateness, engine.now)
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
        matcher = ObservationMatcher(registry: newRegistry)
        counters.events += events.count
        return events
    }

    /// Resumes sessions that were open when the aggregator stopped, except those whose user,
    /// device or beacon has gone or whose user is incognito: those end now, with the reason.
    public mutating func resume(_ sessions: [Presence], at time: Int64) -> [PresenceEvent] {
        var events: [PresenceEvent] = []
        for session in sessions {
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
    public var events = 0

    public init() {}
}
