/// What follows from decisions: the records they make (every message encoded once), the venue
/// page's updates, progress, positions, node rows, and the fleet's health.
extension AggregatorCore {
    /// The record of `messages` decided at `decidedAt`, published once stored while others share
    /// the venue.
    func record(messages: [OutboundMessage], notifications: [PresenceNotification] = [], decidedAt: Int64) -> Action {
        .record(.decided(.init(messages: messages, notifications: notifications, decidedAt: decidedAt, publishOnceStored: shared)))
    }

    /// Records events decided at `time` with the zone events they bring about (after
    /// `zoneEvents`, those the registry or a resume brought about first), the notifications,
    /// retained states and Home Assistant trackers they change, and shows them on the page.
    mutating func decided(_ events: [PresenceEvent], zoneEvents: [ZoneEvent] = [], at time: Int64, into actions: inout [Action]) {
        guard !events.isEmpty || !zoneEvents.isEmpty else { return }
        let registry = pipeline.registry
        let topics = configuration.topics
        let sent = notifications.notifications(for: events, registry: registry)
        var (states, beacons) = board.record(events)
        // Where an entering user stands goes out with the enter, not in a second state a second later.
        for index in states.users.indices where states.users[index].beacon != nil {
            let user = states.users[index].user
            if let position = pipeline.engine.position(of: user), let placed = board.place(user, at: position) { states.users[index] = placed }
        }
        states.beacons = beaconStates.changed(beacons, at: time).map(beaconState(of:))
        var messages = zoneEvents.map { OutboundMessage($0, topics) }
        var touchedZones = Set(zoneEvents.map(\.zone))
        let steps = zones.follow(events)
        for (index, event) in events.enumerated() {
            guard index < steps.count else {
                messages.append(OutboundMessage(event, topics))
                continue
            }
            let step = steps[index]
            messages += step.before.map { OutboundMessage($0, topics) }
            messages.append(OutboundMessage(event, topics))
            messages += step.after.map { OutboundMessage($0, topics) }
            for zoneEvent in step.before + step.after { touchedZones.insert(zoneEvent.zone) }
        }
        messages += sent.map { OutboundMessage(topic: topics.notify(user: $0.user), payload: $0.encoded()) }
        messages += stateMessages(states)
        messages += zoneStateMessages(zoneStates.changed(Array(touchedZones), at: time))
        if homeAssistant != nil {
            var touched: [String] = []
            for event in events where !touched.contains(event.user) { touched.append(event.user) }
            messages += homeAssistant?.follow(touched, events: events, registry: registry, board: board, at: time) ?? []
        }
        actions.append(record(messages: messages, notifications: sent, decidedAt: time))
        for event in events {
            eventCounts[EventTally(kind: event.kind, reason: event.reason), default: 0] += 1
            flaps.observe(event)
        }
        guard page != nil else { return }
        var updates: [PageUpdate] = []
        for event in events {
            if let entry = page?.add(event, registry: registry) { updates.append(.event(entry)) }
        }
        updates += states.users.map { .user($0, name: registry.users[$0.user]?.name) }
        updates += states.clearedUsers.map { .user(UserState(user: $0, beacon: nil, venue: nil, since: 0), name: registry.users[$0]?.name) }
        updates += states.beacons.map { .beacon($0) }
        actions.append(.page(updates))
    }

    /// The retained states `changes` publishes. Sharing the venue with others, only the owner of
    /// shard 0 publishes the beacons' states (`beaconState(of:)`).
    func stateMessages(_ changes: PresenceBoard.Changes) -> [OutboundMessage] {
        guard !publishesBeacons else { return changes.messages(configuration.topics) }
        var mine = changes
        mine.beacons = []
        mine.deletedBeacons = []
        return mine.messages(configuration.topics)
    }

    /// The retained states of `zones` (who is in each), published by whoever publishes the beacons'.
    func zoneStateMessages(_ zones: [String]) -> [OutboundMessage] {
        guard publishesBeacons else { return [] }
        return zones.map { OutboundMessage(topic: configuration.topics.zoneState($0), payload: zoneState(of: $0).encoded(), retain: true) }
    }

    /// Resumes `stays` beside the beacon `sessions` they go with (a restart, shards taken over),
    /// and returns the zone events that bring their users' zones in line with the registry's.
    mutating func resumeZones(_ stays: [ZoneSession], with sessions: [Presence]) -> [ZoneEvent] {
        let presences = Dictionary(sessions.map { ($0.user, $0) }, uniquingKeysWith: { $1 })
        zones.resume(stays, beacons: presences.mapValues(\.beacon))
        return zones.reconcile(presences, users: Set(presences.keys).union(stays.map(\.user)), at: pipeline.clock)
    }

    /// The retained zone states after the zones changed from `old`: those of zones gone deleted,
    /// every other published afresh.
    mutating func zoneStateChanges(from old: ZoneMap) -> [OutboundMessage] {
        guard publishesBeacons else { return [] }
        let gone = old.zones.keys.filter { zones.map.zones[$0] == nil }.sorted()
        for zone in gone { zoneStates.forget(zone) }
        return gone.map { OutboundMessage(topic: configuration.topics.zoneState($0), payload: [], retain: true) }
            + zoneStateMessages(zones.map.zones.keys.sorted())
    }

    /// Who is in `zone`: everyone at one of its beacons, as the board has this core's users and
    /// (sharing) the others' say theirs.
    func zoneState(of zone: String) -> ZoneState {
        let others = ownsEveryShard ? nil : self.others
        var users: [String] = []
        for beacon in zones.map.beacons[zone] ?? [] {
            users += board.state(of: beacon).users
            users += others?.users(at: beacon) ?? []
        }
        return ZoneState(zone: zone, users: others == nil ? users.sorted() : Set(users).sorted())
    }

    /// How many are in `zone`: `zoneState(of:)`'s count, without listing them when alone.
    func zoneCount(_ zone: String) -> Int {
        guard ownsEveryShard else { return zoneState(of: zone).users.count }
        return (zones.map.beacons[zone] ?? []).reduce(0) { $0 + board.count(at: $1) }
    }

    /// The venue's configuration for nodes (the shard count), retained on `{p}/v1/config`.
    func configMessage(_ shards: Shards) -> OutboundMessage {
        OutboundMessage(topic: configuration.topics.config, payload: VenueConfig(shards: shards).encoded(), retain: true)
    }

    /// Publishes the states of beacons that changed while their state was held back, once due.
    mutating func publishWaitingBeacons(at now: Int64, flush: Bool = false, into actions: inout [Action]) {
        let due = beaconStates.due(at: now, flush: flush)
        let dueZones = zoneStates.due(at: now, flush: flush)
        guard !due.isEmpty || !dueZones.isEmpty else { return }
        var changes = PresenceBoard.Changes()
        changes.beacons = due.map(beaconState(of:))
        actions.append(record(messages: stateMessages(changes) + zoneStateMessages(dueZones), decidedAt: now))
        if page != nil, !changes.beacons.isEmpty { actions.append(.page(changes.beacons.map { .beacon($0) })) }
    }

    mutating func saveProgress(resolution: Int64, into actions: inout [Action]) {
        let lastSeen = pipeline.takeLastSeen(touchedAfter: progressMark, resolution: resolution)
        progressMark = pipeline.engine.touches
        actions.append(.record(.progress(.init(clock: pipeline.engine.now, lastSeen: lastSeen.map { .init(user: $0.user, time: $0.time) }))))
    }

    /// Publishes the states of present users whose estimated position moved (when nodes or
    /// beacons have coordinates).
    mutating func placeUsers(at now: Int64, into actions: inout [Action]) {
        var changes = PresenceBoard.Changes()
        for (user, position) in pipeline.engine.positions(touchedAfter: positionsMark) {
            if let state = board.place(user, at: position) { changes.users.append(state) }
        }
        positionsMark = pipeline.engine.touches
        guard !changes.isEmpty else { return }
        actions.append(record(messages: stateMessages(changes), decidedAt: now))
        if page != nil { actions.append(.page(changes.users.map { .user($0, name: pipeline.registry.users[$0.user]?.name) })) }
    }

    /// Publishes the states of present users heard since the last time whose distance to their
    /// beacon changed (`Ranging.differs(from:)`).
    mutating func rangeUsers(at now: Int64, into actions: inout [Action]) {
        var changes = PresenceBoard.Changes()
        for (user, ranging) in pipeline.engine.rangings(touchedAfter: rangingMark) {
            if let state = board.range(user, ranging) { changes.users.append(state) }
        }
        rangingMark = pipeline.engine.touches
        guard !changes.isEmpty else { return }
        actions.append(record(messages: stateMessages(changes), decidedAt: now))
        if page != nil { actions.append(.page(changes.users.map { .user($0, name: pipeline.registry.users[$0.user]?.name) })) }
    }

    /// Brings the page's node rows up to date; an update when they changed.
    mutating func showNodes(at now: Int64, into actions: inout [Action]) {
        guard page != nil else { return }
        let rows = nodeRows(at: now)
        if page?.replaceNodes(rows) == true { actions.append(.page([.nodes(rows)])) }
    }

    /// Every registered node with its place, health and the RSSI offset applied to it.
    func nodeRows(at now: Int64) -> [NodeRow] {
        let registry = pipeline.registry
        let fitted = pipeline.selfCalibration?.applied ?? [:]
        let fleet = Dictionary((pipeline.fleet?.nodeReports(at: now) ?? []).map { ($0.key, $0) }, uniquingKeysWith: { $1 })
        return registry.nodes.values.sorted { $0.key < $1.key }.map { node in
            let offset: (Double, String) = node.pinned ? (node.rssiOffset, "pinned") : fitted[node.key].map { ($0, "fitted") } ?? (node.rssiOffset, "none")
            let health = fleet[node.key]
            return NodeRow(key: node.key, venue: node.venue, beacon: node.beacon, x: node.x, y: node.y, floor: node.floor,
                           online: health.flatMap { $0.state == .unknown ? nil : $0.state == .online }, sightingsPerSecond: health?.sightingsPerSecond,
                           lastSeen: health?.lastHeard, clockSkew: health?.skew, offset: offset.0, offsetSource: offset.1)
        }
    }

    /// Logs the node offsets and has them stored when a fit changed them.
    mutating func calibrated(into actions: inout [Action]) {
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

    /// Reports the fleet's health when it is watched: the first time, when what it outlines
    /// changed (at most once per `statsInterval`), and every `interval` anyway, so that its
    /// figures stay fresh and a report lost with a connection is replaced. A change of the
    /// problems is logged with counts per kind (no tag is named). Sharing the venue, the one that
    /// publishes the beacons' states reports the whole venue, and each that owns some shards but
    /// not all publishes its part for the others.
    mutating func reportHealth(at now: Int64, into actions: inout [Action]) {
        guard let fleet = pipeline.fleet else { return }
        if let reportedAt = healthReportedAt, TimeBounds.difference(now, reportedAt) < configuration.statsInterval { return }
        let report = publishesBeacons ? fleet.report(at: now) : nil
        let part = configuration.sharing ? fleet.part(at: now) : nil
        let due = healthReportedAt.map { TimeBounds.difference(now, $0) >= fleet.configuration.interval } ?? true
        guard due || report?.outline != healthOutline || part?.outline != partOutline else { return }
        if let report, report.outline.problems != healthOutline?.problems {
            var metadata = ["problems": "\(report.problems.count)"]
            for kind in FleetReport.Problem.Kind.allCases { metadata[kind.rawValue] = "\(report.problemCounts[kind] ?? 0)" }
            actions.append(.log(LogLine(.notice, "fleet health", metadata)))
        }
        healthReportedAt = now
        healthOutline = report?.outline
        partOutline = part?.outline
        if let report { actions.append(.health(report, topic: configuration.topics.health)) }
        if let part { actions.append(.health(part, topic: configuration.topics.healthPart(configuration.name))) }
    }

    mutating func warn(_ key: String, _ message: String, _ metadata: [String: String], at time: Int64, into actions: inout [Action]) {
        guard let held = limiter.admit(key, at: time) else { return }
        var metadata = metadata
        if held > 0 { metadata["suppressed"] = "\(held)" }
        actions.append(.log(LogLine(.warning, message, metadata)))
    }
}
