/// Decides, from observations and the passage of time, where each user is: the pure, clock-free
/// heart of the pipeline. Observations go in with `ingest`; `advance(to:)` says "the time is now T",
/// processes every observation up to T in time order and returns the enter and exit events that
/// follow. The same calls in the same order always give the same events, live or in a replay.
public struct PresenceEngine: Sendable {
    public let configuration: EngineConfiguration
    /// The beacons' own margins, dwells, timeouts and neighbours (`setPlaces`).
    public internal(set) var places = PlacePolicies()
    /// The time up to which observations have been processed, ms since the epoch.
    public internal(set) var now: Int64
    public internal(set) var statistics = Statistics()
    /// Counts applied observations: a track remembers the count when it last took one, so that
    /// what changed since a moment can be found (`positions(touchedAfter:)`, `takeLastSeen`).
    public internal(set) var touches: UInt64 = 0

    var pending = PendingQueue()
    /// The observations one `advance` applies (kept to reuse its storage).
    private var due: [Pending] = []
    var waiting = PendingObservations()
    /// Users being tracked, each in its slot for as long as it is tracked; a slot whose user
    /// went idle is free (an empty user key) until a new user takes it.
    var tracks: [UserTrack] = []
    /// How many users the registry holds (`setRegisteredUsers`): `tracks` grows to that many slots
    /// at most rather than doubling past it, a slot being about 280 bytes.
    var registeredUsers = 0
    var trackIndex: [String: Int] = [:]
    /// Which slot each registered device's user was last found in, checked before `trackIndex`.
    var slotCache = TrackSlotCache()
    var freeSlots: [Int] = []
    /// When each track next needs a look because time passes.
    var deadlines = DeadlineQueue()
    /// Slots of tracks that took an observation (or were reset) since the last `advance`: each is
    /// looked at once at its end, before the tracks whose deadline came.
    var lookQueue: [Int] = []
    /// Whether each slot is in `lookQueue`.
    var queuedForLook: [Bool] = []
    var nodes: [String: NodeHealth] = [:]
    /// How many nodes send heartbeats or are offline: only those can hold readings.
    var watchedNodes = 0
    /// The `hmm` decision's smoothed window, kept to reuse its storage.
    var smoothedWindow: [PlaceBelief.Vector] = []
    /// The places one step of the `hmm` decision weighs, kept to reuse its storage.
    var stepPlaces: [StepPlace] = []
    /// The `hmm` decision's layout term for one step, kept to reuse its storage.
    var layoutFit = LayoutFit()
    /// The beacons the `hmm` decision has met, by number.
    var placeNumbers = PlaceNumbers()
    /// The `hmm` decision's figures that follow from the configuration alone.
    let stepModel: StepModel
    /// Set when node health changed: every track is looked at on the next `advance`.
    var healthChanged = false

    /// Counters of what the engine has seen.
    public struct Statistics: Sendable, Equatable {
        /// Observations processed.
        public var observations = 0
        /// Observations that arrived after the engine had passed their time; applied at `now`.
        public var late = 0
        /// Steps of the `hmm` decision closed one by one: its cost, which follows what is heard
        /// (steps in which nothing was heard, once they can decide nothing, pass at once).
        public var steps = 0
        /// Times a track was looked at (`advance`): after observations, and when its deadline came.
        public var looks = 0
    }

    public init(configuration: EngineConfiguration = EngineConfiguration(), now: Int64 = 0) {
        self.configuration = configuration
        self.now = now
        stepModel = StepModel(configuration)
    }

    /// Takes an observation; it is applied when `advance` passes its time (at once if already passed).
    public mutating func ingest(_ observation: Observation) {
        pending.insert(waiting.store(observation))
    }

    /// Processes everything up to `time` and returns the resulting events in order.
    public mutating func advance(to time: Int64) -> [PresenceEvent] {
        var events: [PresenceEvent] = []
        pending.takeDue(upTo: max(time, now), into: &due)
        for next in due {
            guard var observation = waiting.take(next) else { continue }
            if observation.time < now {
                observation.time = now
                statistics.late += 1
            }
            now = observation.time
            apply(observation, events: &events)
        }
        if time > now { now = time }
        if healthChanged {
            healthChanged = false
            for index in tracks.indices where !tracks[index].isFree { look(at: index, events: &events) }
            for index in lookQueue { queuedForLook[index] = false }
            lookQueue.removeAll(keepingCapacity: true)
        } else {
            var due: [Int] = []
            while let next = deadlines.min, next.deadline <= now {
                deadlines.remove(next.slot)
                if !queuedForLook[next.slot] { due.append(next.slot) }
            }
            lookQueue.sort()
            for index in lookQueue {
                queuedForLook[index] = false
                if waitsForItsStep(index) { continue }
                look(at: index, events: &events)
            }
            lookQueue.removeAll(keepingCapacity: true)
            for index in due { look(at: index, events: &events) }
        }
        return events
    }

    /// Decides for the track in `index` at `now` (its timeout, then its place), drops readings
    /// that no longer count, and sets when it next needs a look; frees the slot of an idle track.
    private mutating func look(at index: Int, events: inout [PresenceEvent]) {
        statistics.looks += 1
        var track = takeTrack(index)
        expireIfDue(&track, at: now, events: &events)
        decide(&track, at: now, events: &events)
        if track.links.contains(where: { !isFreshOrHeld($0, at: now) }) {
            track.links = track.links.filter { isFreshOrHeld($0, at: now) }
        }
        if track.isIdle {
            trackIndex[track.user] = nil
            deadlines.remove(index)
            freeSlots.append(index)
            track = UserTrack(user: "")
        } else {
            deadlines.set(index, deadline(of: track))
        }
        putTrack(&track, index)
    }

    /// Whether the track in `index`, which took an observation, can go without a look now: under
    /// the `hmm` decision an observation decides nothing until its step closes, and the track's
    /// next look, not yet due, already comes by the end of the open step. A look now would change
    /// nothing: no step closes before that end, its timeout and stale readings are no nearer than
    /// that look (an observation only moves them later), and the deadline it would set is no
    /// earlier. A user heard once a step is then looked at once a step, not twice.
    private func waitsForItsStep(_ index: Int) -> Bool {
        guard configuration.decision == .hmm, let deadline = deadlines.deadline(of: index), deadline > now else { return false }
        return tracks.withUnsafeBufferPointer { tracks in
            guard let openStep = tracks[index].beliefOpenStep else { return false }
            return deadline <= TimeBounds.sum(openStep * PlaceBelief.step, PlaceBelief.step)
        }
    }

    /// The earliest time at which `advance` could decide anything new: the next pending
    /// observation, or the next moment time alone changes a decision (a dwell completing, a
    /// timeout, a reading going stale). Until then, advancing changes nothing but `now`.
    public var nextDecisionTime: Int64? {
        if healthChanged || !lookQueue.isEmpty { return now }
        switch (pending.earliest, deadlines.min?.deadline) {
        case (nil, nil): return nil
        case (let observation?, nil): return observation
        case (nil, let deadline?): return deadline
        case (let observation?, let deadline?): return min(observation, deadline)
        }
    }

    /// Moves `now` forward without deciding, when `nextDecisionTime` says nothing is due by `time`.
    public mutating func pass(to time: Int64) {
        guard time > now, nextDecisionTime.map({ $0 > time }) ?? true else { return }
        now = time
    }

    /// Where `user` is, if anywhere.
    public func presence(of user: String) -> Presence? {
        trackIndex[user].flatMap { tracks[$0].presence }
    }

    /// Everyone who is somewhere, by user key.
    public var presences: [String: Presence] {
        var result: [String: Presence] = [:]
        for track in tracks where !track.isFree {
            if let presence = track.presence { result[track.user] = presence }
        }
        return result
    }

    /// Moves a track out of the array, so that changing it copies nothing (the array no longer
    /// shares its storage); put it back with `putTrack`.
    mutating func takeTrack(_ index: Int) -> UserTrack {
        var track = UserTrack(user: "")
        swap(&track, &tracks[index])
        return track
    }

    /// Puts a track taken with `takeTrack` back.
    mutating func putTrack(_ track: inout UserTrack, _ index: Int) {
        swap(&track, &tracks[index])
    }

    /// Where `user` is estimated to be, from the fresh readings whose node (or heard beacon) has
    /// coordinates; nil when none has.
    public func position(of user: String) -> Position? {
        trackIndex[user].flatMap { estimatedPosition(tracks[$0].links, at: now, requireAll: false) }
    }

    /// The track of the user `link` belongs to, created when first needed.
    mutating func trackIndex(for link: ObservedLink) -> Int {
        let device = link.carried
        if let slot = slotCache.slot(for: device), tracks.indices.contains(slot), tracks[slot].user == device.user { return slot }
        let index = trackIndex(for: device.user)
        slotCache.remember(device, slot: index)
        return index
    }

    /// The track of `user`, created when first needed.
    mutating func trackIndex(for user: String) -> Int {
        if let index = trackIndex[user] { return index }
        let index: Int
        if let free = freeSlots.popLast() {
            index = free
            tracks[index] = UserTrack(user: user)
        } else {
            index = tracks.count
            if tracks.count == tracks.capacity, tracks.count < registeredUsers {
                tracks.reserveCapacity(min(max(2 * tracks.count, 16), registeredUsers))
            }
            tracks.append(UserTrack(user: user))
            queuedForLook.append(false)
        }
        trackIndex[user] = index
        return index
    }

    /// The track in `index` needs a look at the next `advance`.
    mutating func lookSoon(_ index: Int) {
        guard !queuedForLook[index] else { return }
        queuedForLook[index] = true
        lookQueue.append(index)
    }
}
