/// The aggregator's decisions, without I/O. The live aggregator and `presencectl replay` drive the
/// same value with the same inputs: messages as they arrive (topic, payload, arrival time), ticks
/// of the clock, and registries loaded beside it. It returns what the shell must do: records to
/// make durable and publish, statistics, log lines. Topic dispatch, catching up after a restart,
/// notifications, the live board of who is where, positions and progress all live here.
public struct AggregatorCore: Sendable {
    /// How the core decides and how often it reports.
    public struct Configuration: Sendable {
        public var pipeline = PresencePipeline.Configuration()
        /// Whether a start first drains what the broker kept during a downtime, deciding in the
        /// backlog's own time (live); a replay decides in its file's time from the first line.
        public var catchUp = true
        /// Catching up ends when decisions are this close to the wall clock (plus the lateness),
        /// or no sightings came for this long once the inbound subscriptions are in place
        /// (`subscribed(at:)`: a slow connect must not end it before the backlog arrives), ms...
        public var catchUpQuiet: Int64 = 500
        /// ... or, at the latest, this long after the start, ms.
        public var catchUpLimit: Int64 = 30_000
        /// How often counters are reported, ms.
        public var statsInterval: Int64 = 10_000
        /// How often progress (the clock, last sightings) is saved and positions published, ms.
        public var progressInterval: Int64 = 1_000
        /// A present user's last sighting is saved again once it has moved this much, ms, so that
        /// a venue full of people costs a few writes a second rather than one per person.
        public var lastSeenResolution: Int64 = 5_000
        /// A user is greeted (or bid goodbye) at a beacon at most once per this long, ms.
        public var notificationCooldown: Int64 = 3_600_000
        /// Log lines about external input, at most one per reason per this long, ms.
        public var logInterval: Int64 = 10_000
        /// A beacon's retained state is republished at most once per this long, ms: the first
        /// change at once, the rest together when it has passed (`BeaconStateThrottle`).
        public var beaconStateInterval: Int64 = 1_000
        /// The fleet's health thresholds; nil watches no health (a replay). The report goes out
        /// at the start, within one `statsInterval` of a change, and at least every `interval`.
        public var health: FleetHealth.Configuration?

        public init() {}
    }

    public let configuration: Configuration
    public private(set) var pipeline: PresencePipeline
    public private(set) var board = PresenceBoard()
    private var notifications: NotificationPolicy
    private var limiter: RateLimiter
    private var beaconStates: BeaconStateThrottle
    public private(set) var catchingUp: Bool
    private let startedAt: Int64
    private var lastMessageAt: Int64
    /// When the shell said the inbound subscriptions were in place.
    private var subscribedAt: Int64?
    private var progressAt: Int64
    private var statsAt: Int64
    /// The engine's `touches` at the last progress, and at the last positions.
    private var progressMark: UInt64 = 0
    private var positionsMark: UInt64 = 0
    private var sessions: [Presence]
    /// The self-calibration revision last logged.
    private var loggedCalibration = 0
    /// When the fleet's health was last reported, and what it outlined then.
    private var healthReportedAt: Int64?
    private var healthOutline: FleetReport.Outline?

    /// A core that resumes `sessions` (open when the aggregator stopped) with `registry`, its
    /// clock at the saved one (or `now`), remembering the notifications sent within the cool-down,
    /// and (with self-calibration) applying the node offsets stored before. Call `resume(at:)` first.
    public init(configuration: Configuration, registry: Registry, sessions: [Presence] = [], savedClock: Int64? = nil,
                recentNotifications: [PresenceNotification] = [], storedOffsets: [String: Double] = [:], now: Int64) {
        self.configuration = configuration
        let start = min(savedClock ?? now, now)
        pipeline = PresencePipeline(configuration: configuration.pipeline, registry: registry, start: start, storedOffsets: storedOffsets)
        if let health = configuration.health { pipeline.watchHealth(health, since: now) }
        notifications = NotificationPolicy(cooldown: configuration.notificationCooldown, sent: recentNotifications)
        limiter = RateLimiter(interval: configuration.logInterval)
        beaconStates = BeaconStateThrottle(interval: configuration.beaconStateInterval)
        catchingUp = configuration.catchUp
        startedAt = now
        lastMessageAt = now
        progressAt = now
        statsAt = now
        self.sessions = sessions
    }

    /// Resumes the open sessions: every retained state is published afresh, and sessions whose
    /// user, device or beacon has gone (or whose user is incognito) end now.
    public mutating func resume(at now: Int64) -> [Action] {
        let sessions = self.sessions
        self.sessions = []
        let exits = pipeline.resume(sessions, at: pipeline.clock)
        var actions: [Action] = []
        let restored = board.restore(sessions, beacons: Array(pipeline.registry.beacons.keys))
        if !restored.isEmpty { actions.append(.record(.states(restored))) }
        decided(exits, at: now, into: &actions)
        actions.append(.log(LogLine(.notice, "resumed open sessions", [
            "sessions": "\(sessions.count)", "ended": "\(exits.count)", "clock_behind_ms": "\(TimeBounds.difference(now, pipeline.clock))",
        ])))
        return actions
    }

    /// A message arrived at `receivedAt` (wall clock, ms) on `topic`: sightings, a node's status
    /// or its stats; anything else is ignored.
    public mutating func receive(topic: String, payload: UnsafeRawBufferPointer, at receivedAt: Int64) -> [Action] {
        let receivedAt = TimeBounds.clamped(receivedAt)
        var actions: [Action] = []
        let outcome: PresencePipeline.Outcome
        switch Topics.nodeMessage(in: topic) {
        case .sightings(let node):
            lastMessageAt = receivedAt
            outcome = pipeline.receive(payload, node: Substring(node), at: receivedAt, catchingUp: catchingUp)
            calibrated(into: &actions)
            if outcome.refusal == nil, outcome.droppedSightings > 0 {
                warn("sightings", "dropped invalid sightings from a batch", ["node": node, "dropped": "\(outcome.droppedSightings)"], at: receivedAt,
                     into: &actions)
            }
        case .status(let node):
            guard let state = ServiceStatus.state(of: payload) else {
                warn("status-unreadable", "ignored a node status without a state", ["node": StrangerNodes.displayName(Substring(node))],
                     at: receivedAt, into: &actions)
                return actions
            }
            outcome = pipeline.receiveStatus(node: Substring(node), online: state != .offline, at: receivedAt)
            if outcome.refusal == nil, let held = limiter.admit("status-\(node)", at: receivedAt) {
                actions.append(.log(LogLine(.notice, "node status", ["node": node, "state": state.rawValue, "suppressed": "\(held)"])))
            }
        case .stats(let node):
            let rate = pipeline.fleet == nil ? nil : NodeStatistics.reportsPerSecond(in: payload)
            outcome = pipeline.receiveStats(node: Substring(node), at: receivedAt, reportsPerSecond: rate)
        case nil:
            return actions
        }
        if let refusal = outcome.refusal {
            warn("refused-\(refusal.reason)", "ignored a message",
                 ["topic": StrangerNodes.displayName(Substring(topic), limit: 160), "reason": "\(refusal)"], at: receivedAt, into: &actions)
        }
        decided(outcome.events, at: receivedAt, into: &actions)
        return actions
    }

    /// Whether `subscribed(at:)` was called.
    public var isSubscribed: Bool { subscribedAt != nil }

    /// The inbound subscriptions are in place at `now`: from then on, a quiet moment means the
    /// broker's backlog is drained.
    public mutating func subscribed(at now: Int64) {
        if subscribedAt == nil { subscribedAt = TimeBounds.clamped(now) }
    }

    /// The wall clock reads `now`: decide what time alone decides, and save progress, publish
    /// positions and report counters when they are due. While catching up, nothing moves until
    /// the backlog is drained.
    public mutating func tick(at now: Int64) -> [Action] {
        let now = TimeBounds.clamped(now)
        var actions: [Action] = []
        if catchingUp {
            let lag = TimeBounds.difference(now, pipeline.clock)
            let caughtUp = lag <= configuration.catchUpQuiet + configuration.pipeline.lateness
            let quiet = subscribedAt.map { TimeBounds.difference(now, max(lastMessageAt, $0)) >= configuration.catchUpQuiet } ?? false
            guard caughtUp || quiet || TimeBounds.difference(now, startedAt) >= configuration.catchUpLimit else { return actions }
            catchingUp = false
            actions.append(.log(LogLine(.notice, "caught up with what the broker kept", [
                "batches": "\(pipeline.counters.batches)", "clock_behind_ms": "\(lag)",
            ])))
        }
        decided(pipeline.advanceClock(to: now), at: now, into: &actions)
        publishWaitingBeacons(at: now, into: &actions)
        if TimeBounds.difference(now, progressAt) >= configuration.progressInterval {
            progressAt = now
            saveProgress(resolution: configuration.lastSeenResolution, into: &actions)
            placeUsers(into: &actions)
            reportHealth(at: now, into: &actions)
        }
        if TimeBounds.difference(now, statsAt) >= configuration.statsInterval {
            statsAt = now
            actions.append(.statistics(statistics(at: now)))
        }
        return actions
    }

    /// A registry loaded beside the loop is ready: sessions of users, devices or beacons no longer
    /// registered end (`removed`), those of users now incognito too (`incognito`); retained states
    /// of new beacons are published, those of removed users and beacons deleted.
    ///
    /// When the registry counts more erasures than before, the users it lost were forgotten: they
    /// are dropped without an event, beacons that listed them are published again without them,
    /// and an `erased` record deletes whatever the database holds of them (what earlier records
    /// stored included), so a running aggregator leaves no trace of a forgotten user.
    public mutating func replaceRegistry(_ registry: Registry, at now: Int64) -> [Action] {
        let old = pipeline.registry
        guard registry != old else { return [] }
        let now = TimeBounds.clamped(now)
        var actions: [Action] = []
        let erasing = registry.erasures > old.erasures ? Set(old.users.keys).subtracting(registry.users.keys) : []
        decided(pipeline.replaceRegistry(registry, at: now, erasing: erasing), at: now, into: &actions)
        var changes = PresenceBoard.Changes()
        changes.beacons = registry.beacons.keys.filter { old.beacons[$0] == nil }.sorted().map { BeaconState(beacon: $0, users: []) }
        if !erasing.isEmpty {
            var listed: [String: BeaconState] = [:]
            for user in erasing.sorted() {
                notifications.forget(user: user)
                for state in board.forget(user: user) where registry.beacons[state.beacon] != nil { listed[state.beacon] = state }
            }
            changes.beacons += listed.keys.sorted().compactMap { listed[$0] }.filter { state in !changes.beacons.contains { $0.beacon == state.beacon } }
            actions.append(.record(.erased(users: erasing.sorted())))
            actions.append(.log(LogLine(.notice, "forgot users removed by an erasure", ["users": "\(erasing.count)"])))
        }
        changes.clearedUsers = old.users.keys.filter { key in
            registry.users[key] == nil || (registry.users[key]?.isIncognito(at: now) ?? false) && !(old.users[key]?.isIncognito(at: now) ?? false)
        }.sorted()
        changes.deletedBeacons = old.beacons.keys.filter { registry.beacons[$0] == nil }.sorted()
        for beacon in changes.deletedBeacons {
            board.forget(beacon: beacon)
            beaconStates.forget(beacon)
        }
        if !changes.isEmpty { actions.append(.record(.states(changes))) }
        actions.append(.log(LogLine(.info, "registry reloaded", [
            "beacons": "\(registry.beacons.count)", "nodes": "\(registry.nodes.count)", "users": "\(registry.users.count)",
            "devices": "\(registry.devices.count)",
        ])))
        return actions
    }

    /// The aggregator is stopping and nothing more will be received: the watermark's wait is cut
    /// short (what was received is decided, as a loop left running without input would decide it
    /// `lateness` later), and every last sighting that moved is saved, to the millisecond.
    public mutating func finish(at now: Int64) -> [Action] {
        var actions: [Action] = []
        let drained = TimeBounds.sum(max(TimeBounds.clamped(now), pipeline.clock), configuration.pipeline.lateness)
        decided(pipeline.advanceClock(to: drained), at: now, into: &actions)
        publishWaitingBeacons(at: now, flush: true, into: &actions)
        saveProgress(resolution: 0, into: &actions)
        actions.append(.statistics(statistics(at: now)))
        return actions
    }

    /// The counters now.
    public func statistics(at now: Int64) -> Statistics {
        Statistics(counters: pipeline.counters, strangers: pipeline.strangers, late: pipeline.engine.statistics.late,
                   decisionLag: TimeBounds.difference(now, pipeline.engine.now), catchingUp: catchingUp,
                   calibration: pipeline.selfCalibration?.summary)
    }

    /// Logs the node offsets and has them stored when a fit changed them.
    private mutating func calibrated(into actions: inout [Action]) {
        guard let calibration = pipeline.selfCalibration, calibration.revision != loggedCalibration, let fit = calibration.fit else { return }
        loggedCalibration = calibration.revision
        let offsets = calibration.applied.sorted { $0.key < $1.key }.map { "\($0.key) \(($0.value * 10).rounded() / 10)" }.joined(separator: ", ")
        actions.append(.log(LogLine(.notice, "node offsets fitted from node beacons", [
            "offsets_db": offsets, "links": "\(fit.links)", "residual_db": "\((fit.residual * 10).rounded() / 10)",
            "path_loss_exponent": "\((fit.exponent * 100).rounded() / 100)",
            "groups": fit.groups.map { group in
                "\(group.area.isEmpty ? "-" : group.area): \(group.nodes.count) nodes, \(group.links) links, exponent \((group.exponent * 100).rounded() / 100), residual \((group.residual * 10).rounded() / 10) dB"
            }.joined(separator: "; "),
        ])))
        actions.append(.storeCalibration(calibration.summary))
    }

    /// Records events decided at `time` with the notifications and state changes they call for.
    private mutating func decided(_ events: [PresenceEvent], at time: Int64, into actions: inout [Action]) {
        guard !events.isEmpty else { return }
        let messages = notifications.notifications(for: events, registry: pipeline.registry)
        var (states, beacons) = board.record(events)
        // Where an entering user stands goes out with the enter, not in a second state a second later.
        for index in states.users.indices where states.users[index].beacon != nil {
            let user = states.users[index].user
            if let position = pipeline.engine.position(of: user), let placed = board.place(user, at: position) { states.users[index] = placed }
        }
        states.beacons = beaconStates.changed(beacons, at: time).map(board.state(of:))
        actions.append(.record(.decided(.init(events: events, notifications: messages, states: states, decidedAt: time))))
    }

    /// Publishes the states of beacons that changed while their state was held back, once due.
    private mutating func publishWaitingBeacons(at now: Int64, flush: Bool = false, into actions: inout [Action]) {
        let due = beaconStates.due(at: now, flush: flush)
        guard !due.isEmpty else { return }
        var changes = PresenceBoard.Changes()
        changes.beacons = due.map(board.state(of:))
        actions.append(.record(.states(changes)))
    }

    private mutating func saveProgress(resolution: Int64, into actions: inout [Action]) {
        let lastSeen = pipeline.takeLastSeen(touchedAfter: progressMark, resolution: resolution)
        progressMark = pipeline.engine.touches
        actions.append(.record(.progress(.init(clock: pipeline.engine.now, lastSeen: lastSeen.map { .init(user: $0.user, time: $0.time) }))))
    }

    /// Publishes the states of present users whose estimated position moved (when nodes or
    /// beacons have coordinates).
    private mutating func placeUsers(into actions: inout [Action]) {
        var changes = PresenceBoard.Changes()
        for (user, position) in pipeline.engine.positions(touchedAfter: positionsMark) {
            if let state = board.place(user, at: position) { changes.users.append(state) }
        }
        positionsMark = pipeline.engine.touches
        if !changes.isEmpty { actions.append(.record(.states(changes))) }
    }

    /// Reports the fleet's health when it is watched: the first time, when what it outlines
    /// changed (at most once per `statsInterval`), and every `interval` anyway, so that its
    /// figures stay fresh and a report lost with a connection is replaced. A change of the
    /// problems is logged with counts per kind (no tag is named).
    private mutating func reportHealth(at now: Int64, into actions: inout [Action]) {
        guard let fleet = pipeline.fleet else { return }
        if let reportedAt = healthReportedAt, TimeBounds.difference(now, reportedAt) < configuration.statsInterval { return }
        let report = fleet.report(at: now)
        let outline = report.outline
        let due = healthReportedAt.map { TimeBounds.difference(now, $0) >= fleet.configuration.interval } ?? true
        guard due || outline != healthOutline else { return }
        if outline.problems != healthOutline?.problems {
            var metadata = ["problems": "\(report.problems.count)"]
            for kind in FleetReport.Problem.Kind.allCases { metadata[kind.rawValue] = "\(report.problemCounts[kind] ?? 0)" }
            actions.append(.log(LogLine(.notice, "fleet health", metadata)))
        }
        healthReportedAt = now
        healthOutline = outline
        actions.append(.health(report))
    }

    private mutating func warn(_ key: String, _ message: String, _ metadata: [String: String], at time: Int64, into actions: inout [Action]) {
        guard let held = limiter.admit(key, at: time) else { return }
        var metadata = metadata
        if held > 0 { metadata["suppressed"] = "\(held)" }
        actions.append(.log(LogLine(.warning, message, metadata)))
    }
}
