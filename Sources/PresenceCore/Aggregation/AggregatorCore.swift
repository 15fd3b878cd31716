/// The aggregator's decisions, without I/O, and everything that follows from them. The live
/// aggregator and `presencectl replay` drive the same value with the same inputs: messages as they
/// arrive (topic, payload, arrival time), ticks of the clock, and registries loaded beside it. It
/// returns what the shell must do (`Action`): records to make durable and publish (every message
/// encoded here, once: events, notifications, retained states, Home Assistant's discovery), updates
/// for the open venue pages, statistics, log lines. Topic dispatch, catching up after a restart,
/// notifications, who is where (`PresenceBoard`), the venue page's feed and node rows, positions,
/// flaps and progress all live here, so that a replay reproduces what the live aggregator showed.
public struct AggregatorCore: Sendable {
    /// How the core decides, what it keeps and how often it reports.
    public struct Configuration: Sendable {
        public var pipeline = PresencePipeline.Configuration()
        /// The topics messages are published on.
        public var topics = Topics.standard
        /// Whether a start first drains what the broker kept during a downtime, deciding in the
        /// backlog's own time (live); a replay decides in its file's time from the first line.
        public var catchUp = true
        /// Catching up ends when decisions are this close to the wall clock (plus the lateness),
        /// or no sightings came for this long once the inbound subscriptions are in place
        /// (`subscribed(at:)`: a slow connect must not end it before the backlog arrives), ms...
        public var catchUpQuiet: Int64 = 500
        /// ... or, at the latest, this long after the start (after the way in was back), ms.
        public var catchUpLimit: Int64 = 30_000
        /// While the way in is down (`inboundDown(at:)`), the clock waits this long at most for it to
        /// come back, ms, so that what nodes said meanwhile is decided in its own time when it
        /// arrives; past it decisions go on (absences end in exits) and what comes later is late.
        /// 0: the clock does not wait.
        public var inboundDownHold: Int64 = 30_000
        /// The nodes whose last batch arrived within this before the way in went down are waited
        /// for once it is back (`AwaitedNodes`), until each is heard live or `inboundDownHold` has
        /// passed, ms.
        public var awaitedWithin: Int64 = 5_000
        /// How often counters are reported, ms.
        public var statsInterval: Int64 = 10_000
        /// How often progress (the clock, last sightings) is saved and positions published, ms.
        public var progressInterval: Int64 = 1_000
        /// A present user's last sighting is saved again once it has moved this much while they
        /// are heard, ms, so that a venue full of people costs a few writes a second rather than
        /// one per person; once they are no longer heard, it is saved as it is at the next progress.
        public var lastSeenResolution: Int64 = 5_000
        /// A user is greeted (or bid goodbye) at a beacon at most once per this long, ms.
        public var notificationCooldown: Int64 = 3_600_000
        /// Log lines about external input, at most one per reason per this long, ms.
        public var logInterval: Int64 = 10_000
        /// A beacon's retained state is republished at most once per this long, ms: the first
        /// change at once, the rest together when it has passed (`BeaconStateThrottle`).
        public var beaconStateInterval: Int64 = 1_000
        /// A present user's retained state says how near they are to their beacon (`Ranging`),
        /// refreshed at most once per this long, ms, when it changed; 0: not at all.
        public var rangingInterval: Int64 = 1_000
        /// The fleet's health thresholds; nil watches no health (a replay). The report goes out
        /// at the start, within one `statsInterval` of a change, and at least every `interval`.
        public var health: FleetHealth.Configuration?
        /// Home Assistant's discovery (`--ha-discovery`); nil: none.
        public var homeAssistant: HomeAssistantDiscovery.Configuration?
        /// Whether the core keeps what the venue page and the metrics show (`--http`): the event
        /// feed, the nodes' rows (`page` updates), and the statistics every `progressInterval`.
        public var page = false
        /// Whether the venue's shards are shared with other aggregators (`own(_:sessions:at:)`):
        /// the core starts owning none, with the sessions it was given parked until their shard is
        /// its own, and publishes no beacon state.
        public var sharing = false
        /// This aggregator's name among those sharing the venue (its client id, made a topic level):
        /// its part of the fleet's health goes out on `{p}/v1/health/parts/{name}`.
        public var name = "presence-aggregator"
        /// The foreign nodes read beside the contract's (`--espresense`, `--openmqttgateway`,
        /// `--theengs`); none by default.
        public var foreign = ForeignTopics()

        public init() {}
    }

    /// Where the core is in its life, with what that part of it needs.
    public enum State: Sendable, Equatable {
        /// Made, with the sessions and zone stays to resume; `resume(at:)` resumes them, publishes
        /// every state afresh and moves on. No message or tick is taken before (`Refusal`).
        case starting(Resumption)
        /// Draining what was kept while the aggregator (a start) or its way in (`inboundDown(at:)`)
        /// was down, in the backlog's own time: no tick moves the clock until it ends (`CatchUp`).
        case catchingUp(CatchUp)
        /// Deciding as messages and ticks come.
        case live
        /// `finish(at:)` decided what was received; nothing more is taken.
        case finished
    }

    /// The sessions and zone stays open when the aggregator stopped, that a start resumes: all of
    /// them, or (sharing) those of the shards it owns.
    public struct Resumption: Sendable, Equatable {
        public var sessions: [Presence]
        public var zoneSessions: [ZoneSession]

        public init(sessions: [Presence] = [], zoneSessions: [ZoneSession] = []) {
            self.sessions = sessions
            self.zoneSessions = zoneSessions
        }
    }

    public let configuration: Configuration
    public internal(set) var state: State
    public internal(set) var pipeline: PresencePipeline
    /// Who is where: the retained states, the page and Home Assistant all follow it.
    public internal(set) var board = PresenceBoard()
    /// Who is in which zone, following the board's events.
    public internal(set) var zones: ZonePresence
    /// The venue page's feed and node rows, with `configuration.page`.
    public internal(set) var page: VenuePage?
    var homeAssistant: HomeAssistantDiscovery?
    var notifications: NotificationPolicy
    var limiter: RateLimiter
    var beaconStates: BeaconStateThrottle
    var zoneStates: BeaconStateThrottle
    var flaps = FlapCounter()
    var eventCounts: [EventTally: Int] = [:]
    let startedAt: Int64
    /// When the shell said the inbound subscriptions were first in place.
    var subscribedAt: Int64?
    var progressAt: Int64
    var statsAt: Int64
    /// The engine's `touches` at the last progress, and at the last positions.
    var progressMark: UInt64 = 0
    var positionsMark: UInt64 = 0
    var rangingMark: UInt64 = 0
    var rangedAt: Int64
    /// Each user's home shard (`Registry.homeShards`), for the registry in use.
    var homes: [String: Int] = [:]
    /// Where the users of other aggregators' shards are, from their retained states (sharing).
    var others = OthersPlaces()
    /// Whether other aggregators share the venue, as the last `ShardGrant` said: then a record is
    /// published only once the database holds it (`OutboundRecord.Decided.publishOnceStored`).
    var shared = false
    /// The self-calibration revision last logged.
    var loggedCalibration = 0
    /// When the fleet's health was last reported, and what it and this aggregator's part outlined then.
    var healthReportedAt: Int64?
    var healthOutline: FleetReport.Outline?
    var partOutline: FleetReport.Outline?
    /// What the other aggregators' topics begin with, as bytes (their users' states, their events,
    /// their parts of the health), for `receive(topicBytes:payload:at:)`.
    let sharedTopicPrefixes: [[UInt8]]

    /// A core (`starting`) that resumes `sessions` and `zoneSessions` (open when the aggregator
    /// stopped) with `registry`, its clock at the saved one (or `now`), remembering the
    /// notifications sent within the cool-down, and (with self-calibration) applying the node
    /// offsets stored before. Sharing the venue (`Configuration.sharing`), it owns the shards of
    /// its first grant from the start (none without one), and resumes only their users, as
    /// `own(_:at:)` says before `resume(at:)`.
    public init(configuration: Configuration, registry: Registry, sessions: [Presence] = [], zoneSessions: [ZoneSession] = [], savedClock: Int64? = nil,
                recentNotifications: [PresenceNotification] = [], storedOffsets: [String: Double] = [:], owning first: ShardGrant? = nil, now: Int64) {
        self.configuration = configuration
        let topics = configuration.topics
        sharedTopicPrefixes = [topics.userStatePrefix, topics.eventPrefix, topics.healthPartPrefix].map { Array($0.utf8) }
        let start = min(savedClock ?? now, now)
        pipeline = PresencePipeline(configuration: configuration.pipeline, registry: registry, start: start, storedOffsets: storedOffsets)
        if let health = configuration.health { pipeline.watchHealth(health, since: now) }
        notifications = NotificationPolicy(cooldown: configuration.notificationCooldown, sent: recentNotifications)
        limiter = RateLimiter(interval: configuration.logInterval)
        beaconStates = BeaconStateThrottle(interval: configuration.beaconStateInterval)
        zoneStates = BeaconStateThrottle(interval: configuration.beaconStateInterval)
        zones = ZonePresence(map: ZoneMap(registry: registry))
        homeAssistant = configuration.homeAssistant.map(HomeAssistantDiscovery.init(configuration:))
        if configuration.page { page = VenuePage() }
        startedAt = now
        progressAt = now
        statsAt = now
        rangedAt = now
        board.ranges = configuration.rangingInterval > 0
        let given = Resumption(sessions: sessions, zoneSessions: zoneSessions)
        if configuration.sharing {
            homes = registry.homeShards()
            let grant = first ?? ShardGrant(shards: .empty)
            pipeline.own(grant.shards)
            shared = grant.shared
            state = .starting(Self.resumption(of: grant, from: given, homes: homes))
        } else {
            state = .starting(given)
        }
    }

    /// Whether the backlog is still being drained (or the way in is down and the clock waits).
    public var catchingUp: Bool {
        if case .catchingUp = state { true } else { false }
    }

    /// Resumes the open sessions: the venue's configuration for nodes and every retained state are
    /// published afresh (with Home Assistant's configs and trackers), and sessions whose user, device or beacon has gone (or whose user is
    /// incognito) end now. Then the core catches up, or goes live.
    public mutating func resume(at now: Int64) -> [Action] {
        guard case .starting(let resumption) = state else { return [.refused(.alreadyResumed)] }
        let now = TimeBounds.clamped(now)
        let sessions = resumption.sessions
        if configuration.catchUp {
            state = .catchingUp(CatchUp(cause: .start, since: startedAt, back: subscribedAt))
            pipeline.catchUp(awaitingNodesHeardSince: nil)
        } else {
            state = .live
        }
        let zoneEvents = resumeZones(resumption.zoneSessions, with: sessions)
        let exits = pipeline.resume(sessions, at: pipeline.clock)
        var actions: [Action] = []
        let restored = board.restore(sessions, beacons: Array(pipeline.registry.beacons.keys))
        var messages = [configMessage(pipeline.registry.shards)] + stateMessages(restored)
        messages += zoneStateMessages(zones.map.zones.keys.sorted())
        let mine = ownsUser, configs = publishesBeacons
        messages += homeAssistant?.update(registry: pipeline.registry, board: board, at: now, owns: mine, configs: configs) ?? []
        if !messages.isEmpty { actions.append(record(messages: messages, decidedAt: now)) }
        if page != nil {
            let rows = nodeRows(at: now)
            _ = page?.replaceNodes(rows)
        }
        decided(exits, zoneEvents: zoneEvents, at: now, into: &actions)
        if configuration.page { actions.append(.statistics(statistics(at: now), report: false)) }
        actions.append(.log(LogLine(.notice, "resumed open sessions", [
            "sessions": "\(sessions.count)", "ended": "\(exits.count)", "zone_events": "\(zoneEvents.count)",
            "clock_behind_ms": "\(TimeBounds.difference(now, pipeline.clock))",
        ])))
        return actions
    }

    /// A message arrived at `receivedAt` (wall clock, ms) on `topic`: sightings, a node's status
    /// or its stats, a foreign node's report or status (`configuration.foreign`); anything else is
    /// ignored, and so is everything once finished.
    public mutating func receive(topic: String, payload: UnsafeRawBufferPointer, at receivedAt: Int64) -> [Action] {
        switch state {
        case .starting: return [.refused(.notResumed)]
        case .finished: return []
        case .catchingUp, .live: break
        }
        let receivedAt = TimeBounds.clamped(receivedAt)
        var actions: [Action] = []
        let outcome: PresencePipeline.Outcome
        if configuration.sharing, topic.hasPrefix(configuration.topics.userStatePrefix) {
            othersState(user: String(topic.dropFirst(configuration.topics.userStatePrefix.count)), payload: payload, at: receivedAt, into: &actions)
            return actions
        }
        if configuration.sharing, topic.hasPrefix(configuration.topics.eventPrefix) {
            othersEvent(payload: payload, at: receivedAt, into: &actions)
            return actions
        }
        if configuration.sharing, topic.hasPrefix(configuration.topics.healthPartPrefix) {
            let name = topic.dropFirst(configuration.topics.healthPartPrefix.count)
            if name != configuration.name, pipeline.absorbHealth(part: payload, from: String(name)) == false {
                warn("health-part", "ignored another aggregator's health part that is not one", [:], at: receivedAt, into: &actions)
            }
            return actions
        }
        if !configuration.foreign.isEmpty {
            var topic = topic
            if topic.withUTF8({ receiveForeign(topic: UnsafeRawBufferPointer($0), payload: payload, at: receivedAt, into: &actions) }) { return actions }
        }
        switch Topics.nodeMessage(in: topic) {
        case .sightings(let node):
            sightingArrived(at: receivedAt)
            outcome = pipeline.receive(payload, node: Substring(node), at: receivedAt)
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

    /// The wall clock reads `now`: decide what time alone decides, and save progress, publish
    /// positions and node rows and report counters when they are due. While catching up, nothing
    /// moves until the backlog is drained (or the way in, down, is given up: `CatchUp.ending`);
    /// only the counters are reported.
    public mutating func tick(at now: Int64) -> [Action] {
        switch state {
        case .starting: return [.refused(.notResumed)]
        case .finished: return []
        case .catchingUp, .live: break
        }
        let now = TimeBounds.clamped(now)
        var actions: [Action] = []
        if catchingUp, !catchUpEnds(at: now, into: &actions) {
            reportCounters(at: now, into: &actions)
            return actions
        }
        decided(pipeline.advanceClock(to: now), at: now, into: &actions)
        publishWaitingBeacons(at: now, into: &actions)
        if configuration.rangingInterval > 0, TimeBounds.difference(now, rangedAt) >= configuration.rangingInterval {
            rangedAt = now
            rangeUsers(at: now, into: &actions)
        }
        if TimeBounds.difference(now, progressAt) >= configuration.progressInterval {
            progressAt = now
            saveProgress(resolution: configuration.lastSeenResolution, into: &actions)
            placeUsers(at: now, into: &actions)
            reportHealth(at: now, into: &actions)
            showNodes(at: now, into: &actions)
            if configuration.page { actions.append(.statistics(statistics(at: now), report: false)) }
        }
        reportStatistics(at: now, into: &actions)
        return actions
    }

    /// The counters, reported (logged and published) once `statsInterval` has passed since the last time.
    mutating func reportStatistics(at now: Int64, into actions: inout [Action]) {
        guard TimeBounds.difference(now, statsAt) >= configuration.statsInterval else { return }
        statsAt = now
        actions.append(.statistics(statistics(at: now), report: true))
    }

    /// A registry loaded beside the loop is ready: sessions of users, devices or beacons no longer
    /// registered end (`removed`), those of users now incognito too (`incognito`); a new shard count
    /// is published to the nodes, retained states of new beacons are published, those of removed
    /// users and beacons deleted; Home Assistant's configs follow, and open pages start again from
    /// a snapshot.
    ///
    /// When the registry counts more erasures than before, the users it lost were forgotten: they
    /// are dropped without an event, beacons that listed them are published again without them,
    /// and an `erased` record deletes whatever the database holds of them (what earlier records
    /// stored included), so a running aggregator leaves no trace of a forgotten user.
    public mutating func replaceRegistry(_ registry: Registry, at now: Int64) -> [Action] {
        let old = pipeline.registry
        guard registry != old, state != .finished else { return [] }
        let now = TimeBounds.clamped(now)
        var actions: [Action] = []
        let erasing = registry.erasures > old.erasures ? Set(old.users.keys).subtracting(registry.users.keys) : []
        zones.drop(users: erasing)
        let oldZones = zones.map
        decided(pipeline.replaceRegistry(registry, at: now, erasing: erasing), at: now, into: &actions)
        zones.replaceMap(ZoneMap(registry: registry))
        if zones.map != oldZones {
            decided([], zoneEvents: zones.reconcile(pipeline.engine.presences, at: max(now - configuration.pipeline.lateness, pipeline.engine.now)),
                    at: now, into: &actions)
        }
        if configuration.sharing { homes = registry.homeShards() }
        if let owned = pipeline.owned, registry.shards != old.shards {
            // A new shard count re-homes users: those now on another aggregator's shards go to it.
            _ = letGo(of: { [homes] in !owned.contains(homes[$0] ?? 0) }, into: &actions)
        }
        var changes = PresenceBoard.Changes()
        changes.beacons = registry.beacons.keys.filter { old.beacons[$0] == nil }.sorted().map { BeaconState(beacon: $0, users: []) }
        if !erasing.isEmpty {
            var listed: [String: BeaconState] = [:]
            for user in erasing.sorted() {
                notifications.forget(user: user)
                for state in board.forget(user: user) where registry.beacons[state.beacon] != nil { listed[state.beacon] = state }
            }
            changes.beacons += listed.keys.sorted().compactMap { listed[$0] }.filter { state in !changes.beacons.contains { $0.beacon == state.beacon } }
            flaps.forget(erasing)
            page?.forget(erasing)
            actions.append(.record(.erased(users: erasing.sorted())))
            actions.append(.log(LogLine(.notice, "forgot users removed by an erasure", ["users": "\(erasing.count)"])))
        }
        changes.clearedUsers = old.users.keys.filter { key in
            registry.users[key] == nil || (registry.users[key]?.isIncognito(at: now) ?? false) && !(old.users[key]?.isIncognito(at: now) ?? false)
        }.sorted()
        // Their sessions ended above; whatever the board still holds of them goes too.
        for user in old.users.keys where registry.users[user] == nil { _ = board.forget(user: user) }
        changes.deletedBeacons = old.beacons.keys.filter { registry.beacons[$0] == nil }.sorted()
        for beacon in changes.deletedBeacons {
            board.forget(beacon: beacon)
            beaconStates.forget(beacon)
        }
        flaps.forget(Set(flaps.users).subtracting(registry.users.keys))
        let mine = ownsUser, configs = publishesBeacons
        var messages = (registry.shards != old.shards ? [configMessage(registry.shards)] : []) + stateMessages(changes)
        if zones.map != oldZones {
            messages += zoneStateChanges(from: oldZones)
        } else if !erasing.isEmpty {
            messages += zoneStateMessages(zones.map.zones.keys.sorted())
        }
        messages += homeAssistant?.update(registry: registry, board: board, at: now, owns: mine, configs: configs) ?? []
        if !messages.isEmpty { actions.append(record(messages: messages, decidedAt: now)) }
        if page != nil {
            let rows = nodeRows(at: now)
            _ = page?.replaceNodes(rows)
            actions.append(.page([.snapshot]))
        }
        actions.append(.log(LogLine(.info, "registry reloaded", [
            "beacons": "\(registry.beacons.count)", "nodes": "\(registry.nodes.count)", "users": "\(registry.users.count)",
            "devices": "\(registry.devices.count)",
        ])))
        return actions
    }

    /// The aggregator is stopping and nothing more will be received: the watermark's wait is cut
    /// short (what was received is decided, as a loop left running without input would decide it
    /// `lateness` later), and every last sighting that moved is saved, to the millisecond. While
    /// catching up, decisions go only as far as what was received: the next start catches up from
    /// there with what the broker still keeps.
    public mutating func finish(at now: Int64) -> [Action] {
        guard state != .finished else { return [] }
        // While catching up, what is still to come is not decided away: only what was received.
        let decidedUpTo = catchingUp ? max(pipeline.clock, pipeline.takenUpTo) : max(TimeBounds.clamped(now), pipeline.clock)
        state = .finished
        var actions: [Action] = []
        let drained = TimeBounds.sum(decidedUpTo, configuration.pipeline.lateness)
        decided(pipeline.advanceClock(to: drained), at: now, into: &actions)
        publishWaitingBeacons(at: now, flush: true, into: &actions)
        saveProgress(resolution: 0, into: &actions)
        actions.append(.statistics(statistics(at: now), report: true))
        return actions
    }

    /// The counters now.
    public func statistics(at now: Int64) -> Statistics {
        var statistics = Statistics(counters: pipeline.counters, strangers: pipeline.strangers, late: pipeline.engine.statistics.late,
                                    decisionLag: TimeBounds.difference(now, pipeline.engine.now), catchingUp: catchingUp,
                                    calibration: pipeline.selfCalibration?.summary, events: eventCounts, flaps: flaps.count, nodes: page?.nodes ?? [])
        if page != nil {
            let others = ownsEveryShard ? nil : self.others
            for beacon in pipeline.registry.beacons.keys {
                statistics.present[beacon] = board.count(at: beacon) + (others?.users(at: beacon).count ?? 0)
            }
            for zone in zones.map.zones.keys {
                statistics.zonePresent[zone] = zoneCount(zone)
            }
        }
        statistics.ownedShards = pipeline.owned?.count
        statistics.shards = pipeline.registry.shards.count
        return statistics
    }
}
