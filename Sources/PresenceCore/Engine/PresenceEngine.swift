import HeapModule

/// Decides, from observations and the passage of time, where each user is: the pure, clock-free
/// heart of the pipeline. Observations go in with `ingest`; `advance(to:)` says "the time is now T",
/// processes every observation up to T in time order and returns the enter and exit events that
/// follow. The same calls in the same order always give the same events, live or in a replay.
public struct PresenceEngine: Sendable {
    public let configuration: EngineConfiguration
    /// The time up to which observations have been processed, ms since the epoch.
    public private(set) var now: Int64
    public private(set) var statistics = Statistics()

    private var pending = Heap<Pending>()
    private var arrivals: UInt64 = 0
    private var users: [String: UserTrack] = [:]
    /// The earliest deadline found by the last `advance` (tracks change only inside `advance`).
    private var timeDeadline: Int64?
    private var nodes: [String: NodeHealth] = [:]

    /// Counters of what the engine has seen.
    public struct Statistics: Sendable, Equatable {
        /// Observations processed.
        public var observations = 0
        /// Observations that arrived after the engine had passed their time; applied at `now`.
        public var late = 0
    }

    public init(configuration: EngineConfiguration = EngineConfiguration(), now: Int64 = 0) {
        self.configuration = configuration
        self.now = now
    }

    /// Takes an observation; it is applied when `advance` passes its time (at once if already passed).
    public mutating func ingest(_ observation: Observation) {
        arrivals += 1
        pending.insert(Pending(observation: observation, arrival: arrivals))
    }

    /// Processes everything up to `time` and returns the resulting events in order.
    public mutating func advance(to time: Int64) -> [PresenceEvent] {
        var events: [PresenceEvent] = []
        while let next = pending.min, next.observation.time <= max(time, now) {
            _ = pending.removeMin()
            var observation = next.observation
            if observation.time < now {
                observation.time = now
                statistics.late += 1
            }
            now = observation.time
            apply(observation, events: &events)
        }
        if time > now { now = time }
        var earliest = Int64.max
        for user in users.keys.sorted() {
            guard var track = users[user] else { continue }
            expireIfDue(&track, user: user, at: now, events: &events)
            decide(&track, user: user, at: now, events: &events)
            track.links = track.links.filter { isFreshOrHeld($0.key, $0.value, at: now) }
            if track.presence == nil, track.candidate == nil, track.links.isEmpty {
                users[user] = nil
            } else {
                earliest = min(earliest, deadline(of: track))
                users[user] = track
            }
        }
        timeDeadline = earliest == .max ? nil : earliest
        return events
    }

    /// The earliest time at which `advance` could decide anything new: the next pending
    /// observation, or the next moment time alone changes a decision (a dwell completing, a
    /// timeout, a reading going stale). Until then, advancing changes nothing but `now`.
    public var nextDecisionTime: Int64? {
        switch (pending.min?.observation.time, timeDeadline) {
        case (nil, nil): nil
        case (let observation?, nil): observation
        case (nil, let deadline?): deadline
        case (let observation?, let deadline?): min(observation, deadline)
        }
    }

    /// Moves `now` forward without deciding, when `nextDecisionTime` says nothing is due by `time`.
    public mutating func pass(to time: Int64) {
        guard time > now, nextDecisionTime.map({ $0 > time }) ?? true else { return }
        now = time
    }

    /// What the engine currently believes about one (device, node, beacon) stream.
    public struct Reading: Sendable, Equatable {
        public var device: String
        public var node: String
        public var beacon: String
        /// Smoothed RSSI, dBm, and its variance.
        public var rssi: Double
        public var variance: Double
        public var tx: Double
        public var lastTime: Int64
        /// Estimated distance, m.
        public var distance: Double
    }

    /// The fresh readings of `user`'s devices, sorted by node and beacon.
    public func readings(of user: String) -> [Reading] {
        guard let track = users[user] else { return [] }
        return track.links.filter { isFresh($0.value, at: now) }.sorted { $0.key < $1.key }.map { key, link in
            Reading(device: key.device, node: key.node, beacon: key.beacon, rssi: link.smoother.value, variance: link.smoother.variance,
                    tx: link.tx, lastTime: link.smoother.lastTime, distance: configuration.distance(pathLoss: link.pathLoss))
        }
    }

    // MARK: Node health

    /// A node was heard at `time`: a batch, or (`heartbeat`) its periodic stats. A node that sends
    /// heartbeats is expected to keep doing so; one that falls silent is suspected down.
    public mutating func nodeHeard(_ node: String, at time: Int64, heartbeat: Bool) {
        var health = nodes[node] ?? NodeHealth()
        health.lastHeard = max(health.lastHeard, time)
        health.heartbeats = health.heartbeats || heartbeat
        nodes[node] = health
        timeDeadline = min(timeDeadline ?? now, now)
    }

    /// A node's status says it is offline (its will, or a clean stop) or online again.
    public mutating func setNode(_ node: String, offline: Bool, at time: Int64) {
        var health = nodes[node] ?? NodeHealth()
        health.offlineSince = offline ? (health.offlineSince ?? time) : nil
        if !offline { health.lastHeard = max(health.lastHeard, time) }
        nodes[node] = health
        timeDeadline = min(timeDeadline ?? now, now)
    }

    /// Whether `node` cannot be trusted to have heard what happened after `since` at `time`: its
    /// status says offline, or it sends heartbeats and has said nothing since then. Only for
    /// `nodeDownHold` after that; then it counts as a node that simply heard nothing.
    private func isSuspect(_ node: String, since: Int64, at time: Int64) -> Bool {
        guard let health = nodes[node] else { return false }
        if let offline = health.offlineSince {
            return time - max(since, offline) <= configuration.nodeDownHold
        }
        return health.heartbeats && health.lastHeard < since + configuration.heartbeatGrace
            && time - since <= configuration.nodeDownHold
    }

    /// When time alone could next change a decision for this track.
    private func deadline(of track: UserTrack) -> Int64 {
        var earliest = Int64.max
        if let presence = track.presence {
            earliest = timeoutDeadline(presence, track)
        }
        if let candidate = track.candidate {
            earliest = min(earliest, candidate.since + (track.presence == nil ? configuration.enterDwell : configuration.switchDwell))
        }
        for (key, link) in track.links {
            earliest = min(earliest, link.smoother.lastTime + configuration.staleAfter + 1)
            if nodes[key.node] != nil {
                earliest = min(earliest, link.smoother.lastTime + configuration.nodeDownHold + 1)
            }
        }
        return earliest
    }

    /// When the session times out: the absence timeout after the last qualifying sighting, later
    /// while a restart's grace lasts, or while the node that last heard the user is suspected down
    /// (its silence is no evidence that the user left).
    private func timeoutDeadline(_ presence: Presence, _ track: UserTrack) -> Int64 {
        var deadline = max(presence.lastSeen + configuration.absenceTimeout, track.graceUntil ?? .min)
        if let node = presence.lastNode, let health = nodes[node] {
            let suspectSince = health.offlineSince.map { max($0, presence.lastSeen) } ?? presence.lastSeen
            if health.offlineSince != nil || (health.heartbeats && health.lastHeard < presence.lastSeen + configuration.heartbeatGrace) {
                deadline = max(deadline, suspectSince + configuration.nodeDownHold + 1)
            }
        }
        return deadline
    }

    /// Where `user` is, if anywhere.
    public func presence(of user: String) -> Presence? {
        users[user]?.presence
    }

    /// Everyone who is somewhere, by user key.
    public var presences: [String: Presence] {
        users.compactMapValues(\.presence)
    }

    /// Restores a session that was open when the aggregator stopped. The user is not timed out
    /// before `now + resumeGrace`, so that someone still there is heard again first.
    public mutating func resume(_ presence: Presence) {
        var track = users[presence.user] ?? UserTrack()
        track.presence = presence
        track.graceUntil = now + configuration.resumeGrace
        users[presence.user] = track
        timeDeadline = min(timeDeadline ?? .max, deadline(of: track))
    }

    /// Ends `user`'s session, if any, at `time` with `reason`, and forgets everything about the user.
    public mutating func remove(user: String, at time: Int64, reason: PresenceEvent.ExitReason) -> [PresenceEvent] {
        pending = Heap(pending.unordered.filter { $0.observation.user != user })
        guard let track = users.removeValue(forKey: user), let presence = track.presence else { return [] }
        return [exitEvent(presence, at: max(time, presence.entered), reason: reason)]
    }

    /// Forgets a beacon: sessions there end with `removed`, its observations are dropped.
    public mutating func removeBeacon(_ beacon: String, at time: Int64) -> [PresenceEvent] {
        var events: [PresenceEvent] = []
        for user in users.keys.sorted() {
            guard var track = users[user] else { continue }
            track.links = track.links.filter { $0.key.beacon != beacon }
            if track.candidate?.beacon == beacon { track.candidate = nil }
            if let presence = track.presence, presence.beacon == beacon {
                events.append(exitEvent(presence, at: max(time, presence.entered), reason: .removed))
                track.presence = nil
            }
            users[user] = track
        }
        pending = Heap(pending.unordered.filter { $0.observation.beacon != beacon })
        return events
    }

    /// Forgets a device: a session it holds ends with `removed`, its observations are dropped.
    public mutating func removeDevice(_ device: String, at time: Int64) -> [PresenceEvent] {
        var events: [PresenceEvent] = []
        for user in users.keys.sorted() {
            guard var track = users[user] else { continue }
            track.links = track.links.filter { $0.key.device != device }
            if let presence = track.presence, presence.device == device {
                events.append(exitEvent(presence, at: max(time, presence.entered), reason: .removed))
                track.presence = nil
                track.candidate = nil
            }
            users[user] = track
        }
        pending = Heap(pending.unordered.filter { $0.observation.device != device })
        return events
    }

    // MARK: Deciding

    private mutating func apply(_ observation: Observation, events: inout [PresenceEvent]) {
        statistics.observations += 1
        var track = users[observation.user] ?? UserTrack()
        expireIfDue(&track, user: observation.user, at: observation.time, events: &events)

        let key = LinkKey(device: observation.device, node: observation.node, beacon: observation.beacon)
        if var link = track.links[key] {
            link.smoother.update(rssi: observation.rssi, at: observation.time, settings: configuration.smoothing)
            link.tx = observation.tx
            link.txKnown = observation.txKnown
            link.radius = observation.radius
            link.venue = observation.venue
            track.links[key] = link
        } else {
            track.links[key] = Link(smoother: RSSISmoother(rssi: observation.rssi, at: observation.time, settings: configuration.smoothing), tx: observation.tx,
                                    txKnown: observation.txKnown, radius: observation.radius, venue: observation.venue)
        }
        if let link = track.links[key], qualifies(link) {
            if var presence = track.presence, presence.beacon == observation.beacon {
                if observation.time >= presence.lastSeen {
                    presence.lastSeen = observation.time
                    presence.lastNode = observation.node
                }
                track.presence = presence
            }
            if var candidate = track.candidate, candidate.beacon == observation.beacon {
                candidate.sightings += 1
                track.candidate = candidate
            }
        }
        decide(&track, user: observation.user, at: observation.time, events: &events)
        users[observation.user] = track
    }

    /// A reading is fresh within `staleAfter`.
    private func isFresh(_ link: Link, at time: Int64) -> Bool {
        time - link.smoother.lastTime <= configuration.staleAfter
    }

    /// Fresh, or held: the node that took the reading is suspected down, so its last evidence
    /// stands for the beacon the user is at (a neighbour must beat it by the margin to win). Held
    /// evidence defends; it never wins a move or an enter by itself.
    private func isFreshOrHeld(_ key: LinkKey, _ link: Link, at time: Int64) -> Bool {
        isFresh(link, at: time) || isSuspect(key.node, since: link.smoother.lastTime, at: time)
    }

    private func qualifies(_ link: Link) -> Bool {
        guard let radius = link.radius else { return true }
        return configuration.distance(pathLoss: link.pathLoss) <= radius
    }

    /// The nearest qualifying link of each beacon heard recently, as path loss in dB; for the
    /// beacon the user is at, held evidence counts too.
    private func scores(_ track: UserTrack, at time: Int64) -> [String: Score] {
        var scores: [String: Score] = [:]
        let current = track.presence?.beacon
        for (key, link) in track.links where qualifies(link) {
            guard isFresh(link, at: time) || (key.beacon == current && isSuspect(key.node, since: link.smoother.lastTime, at: time)) else {
                continue
            }
            let loss = link.pathLoss
            if let existing = scores[key.beacon], existing.pathLoss < loss || (existing.pathLoss == loss && existing.link < key) {
                continue
            }
            scores[key.beacon] = Score(pathLoss: loss, link: key)
        }
        return scores
    }

    private func best(_ scores: [String: Score], excluding beacon: String? = nil) -> (beacon: String, score: Score)? {
        var best: (beacon: String, score: Score)?
        for (key, score) in scores where key != beacon {
            if let current = best, current.score.pathLoss < score.pathLoss || (current.score.pathLoss == score.pathLoss && current.beacon < key) {
                continue
            }
            best = (key, score)
        }
        return best
    }

    private func decide(_ track: inout UserTrack, user: String, at time: Int64, events: inout [PresenceEvent]) {
        let scores = scores(track, at: time)
        if let presence = track.presence {
            let current = scores[presence.beacon]?.pathLoss ?? .infinity
            guard let challenger = best(scores, excluding: presence.beacon),
                  challenger.score.pathLoss + configuration.switchMargin <= current else {
                track.candidate = nil
                return
            }
            guard let candidate = track.candidate, candidate.beacon == challenger.beacon else {
                track.candidate = Candidate(beacon: challenger.beacon, since: time, sightings: 1)
                return
            }
            guard time - candidate.since >= configuration.switchDwell else { return }
            events.append(exitEvent(presence, at: time, reason: .moved))
            enter(&track, user: user, beacon: challenger.beacon, score: challenger.score, at: time, events: &events)
        } else {
            guard let nearest = best(scores) else {
                track.candidate = nil
                return
            }
            guard let candidate = track.candidate, candidate.beacon == nearest.beacon else {
                track.candidate = Candidate(beacon: nearest.beacon, since: time, sightings: 1)
                if configuration.enterDwell == 0, configuration.enterSightings <= 1 {
                    enter(&track, user: user, beacon: nearest.beacon, score: nearest.score, at: time, events: &events)
                }
                return
            }
            guard time - candidate.since >= configuration.enterDwell, candidate.sightings >= configuration.enterSightings else { return }
            enter(&track, user: user, beacon: nearest.beacon, score: nearest.score, at: time, events: &events)
        }
    }

    private func enter(_ track: inout UserTrack, user: String, beacon: String, score: Score, at time: Int64, events: inout [PresenceEvent]) {
        guard let link = track.links[score.link] else { return }
        let distance = configuration.distance(pathLoss: score.pathLoss)
        let presence = Presence(user: user, device: score.link.device, beacon: beacon, venue: link.venue, entered: time,
                                lastSeen: link.smoother.lastTime, lastNode: score.link.node)
        track.presence = presence
        track.candidate = nil
        track.graceUntil = nil
        let id = EventID.make(kind: .enter, user: user, device: presence.device, beacon: beacon, at: time, entered: nil)
        events.append(PresenceEvent(
            kind: .enter, id: id, user: user, device: presence.device, beacon: beacon, venue: link.venue, at: time,
            rssi: link.smoother.value, distance: distance, proximity: link.txKnown ? Proximity(distance: distance) : .unknown))
    }

    private func expireIfDue(_ track: inout UserTrack, user: String, at time: Int64, events: inout [PresenceEvent]) {
        guard let presence = track.presence else { return }
        guard time >= timeoutDeadline(presence, track) else { return }
        events.append(exitEvent(presence, at: presence.lastSeen, reason: .timeout))
        track.presence = nil
        track.candidate = nil
        track.graceUntil = nil
    }

    private func exitEvent(_ presence: Presence, at time: Int64, reason: PresenceEvent.ExitReason) -> PresenceEvent {
        let id = EventID.make(kind: .exit, user: presence.user, device: presence.device, beacon: presence.beacon, at: time, entered: presence.entered)
        return PresenceEvent(kind: .exit, id: id, user: presence.user, device: presence.device, beacon: presence.beacon,
                             venue: presence.venue, at: time, entered: presence.entered, reason: reason)
    }
}

/// A user's current session as the engine sees it.
public struct Presence: Sendable, Equatable {
    public var user: String
    /// The device whose observations decided the enter.
    public var device: String
    public var beacon: String
    public var venue: String?
    public var entered: Int64
    /// The last qualifying sighting at the beacon.
    public var lastSeen: Int64
    /// The node that heard it, when known.
    public var lastNode: String?

    public init(user: String, device: String, beacon: String, venue: String?, entered: Int64, lastSeen: Int64, lastNode: String? = nil) {
        self.user = user
        self.device = device
        self.beacon = beacon
        self.venue = venue
        self.entered = entered
        self.lastSeen = lastSeen
        self.lastNode = lastNode
    }
}

private struct Pending: Comparable, Sendable {
    var observation: Observation
    var arrival: UInt64

    static func < (lhs: Pending, rhs: Pending) -> Bool {
        (lhs.observation.time, lhs.arrival) < (rhs.observation.time, rhs.arrival)
    }

    static func == (lhs: Pending, rhs: Pending) -> Bool {
        lhs.observation.time == rhs.observation.time && lhs.arrival == rhs.arrival
    }
}

private struct LinkKey: Hashable, Comparable, Sendable {
    var device: String
    var node: String
    var beacon: String

    static func < (lhs: LinkKey, rhs: LinkKey) -> Bool {
        (lhs.device, lhs.node, lhs.beacon) < (rhs.device, rhs.node, rhs.beacon)
    }
}

private struct Link: Sendable {
    var smoother: RSSISmoother
    var tx: Double
    var txKnown: Bool
    var radius: Double?
    var venue: String?

    /// tx - smoothed RSSI: the larger, the further.
    var pathLoss: Double { tx - smoother.value }
}

private struct Score: Sendable {
    var pathLoss: Double
    var link: LinkKey
}

private struct Candidate: Sendable {
    var beacon: String
    var since: Int64
    var sightings: Int
}

private struct UserTrack: Sendable {
    var links: [LinkKey: Link] = [:]
    var presence: Presence?
    var candidate: Candidate?
    var graceUntil: Int64?
}

/// What the engine knows of a node's health.
private struct NodeHealth: Sendable {
    var lastHeard = Int64.min
    /// Whether the node sends periodic stats, so that its silence means something.
    var heartbeats = false
    var offlineSince: Int64?
}
