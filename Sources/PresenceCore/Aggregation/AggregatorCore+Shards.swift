/// Sharing a venue with other aggregators: which shards' users this core decides for.
extension AggregatorCore {
    /// The shards this core decides for now; nil: every shard (not sharing).
    public var ownedShards: ShardSet? { pipeline.owned }

    /// From `now` on the core decides for the users of the grant's shards, and publishes once
    /// stored while the grant says others share the venue. Users of shards it no longer owns are
    /// forgotten without an event once their last sightings are saved exactly (the next owner
    /// resumes them from the database). Users of shards it now owns resume their open sessions as
    /// the grant gives them (what the database said once the shards were locked); a session whose
    /// user, device or beacon has gone ends now, as at a restart, and one whose user left meanwhile
    /// ends at its last sighting's timeout. The zone stays of resumed users come back the same way.
    /// Before `resume(at:)`, the grant changes what it resumes instead: the sessions the core was
    /// made with (fresher than the database's) of the shards it still owns, and the grant's of
    /// users it holds none of.
    public mutating func own(_ grant: ShardGrant, at now: Int64) -> [Action] {
        guard configuration.sharing, state != .finished else { return [] }
        shared = grant.shared
        let now = TimeBounds.clamped(now)
        let before = pipeline.owned ?? .empty
        var actions: [Action] = []
        var moved = (resumed: 0, letGo: 0)
        if case .starting(let resumption) = state {
            pipeline.own(grant.shards)
            let next = Self.resumption(of: grant, from: resumption, homes: homes)
            moved.resumed = next.sessions.count
            state = .starting(next)
        } else {
            moved = take(grant, at: now, into: &actions)
        }
        let released = before.subtracting(grant.shards), adopted = grant.shards.subtracting(before)
        if !released.isEmpty || !adopted.isEmpty || moved.resumed > 0 {
            actions.append(.log(LogLine(.notice, "shards owned", [
                "shards": "\(grant.shards)", "taken": "\(adopted)", "given_back": "\(released)", "sessions_resumed": "\(moved.resumed)",
                "users_let_go": "\(moved.letGo)",
            ])))
        }
        return actions
    }

    /// `own(_:at:)` once resumed: lets the users of shards no longer owned go, resumes those of
    /// shards taken, and publishes the beacons' states afresh when they become this core's to
    /// publish; returns how many sessions resumed and users went.
    private mutating func take(_ grant: ShardGrant, at now: Int64, into actions: inout [Action]) -> (resumed: Int, letGo: Int) {
        let shards = grant.shards
        let home = homes
        let wasPublishing = publishesBeacons
        let leaving = letGo(of: { !shards.contains(home[$0] ?? 0) }, into: &actions)
        pipeline.own(shards)
        // What the database says of users of these shards that this core does not hold: those of a
        // shard just taken, or re-homed here by a new shard count.
        let isNew = { [engine = pipeline.engine] (user: String) in shards.contains(home[user] ?? 0) && engine.presences[user] == nil }
        let resumed = grant.sessions.filter { isNew($0.user) }
        let resumedStays = grant.zoneSessions.filter { isNew($0.user) && zones.stays(of: $0.user).isEmpty }
        if !resumed.isEmpty || !resumedStays.isEmpty {
            // Theirs no longer: this core's board holds them now.
            for session in resumed { _ = others.set(session.user, to: nil) }
            let zoneEvents = resumeZones(resumedStays, with: resumed)
            let exits = pipeline.resume(resumed, at: pipeline.clock)
            _ = board.restore(resumed, beacons: [])
            decided(exits, zoneEvents: zoneEvents, at: now, into: &actions)
        }
        var messages: [OutboundMessage] = []
        if publishesBeacons, !wasPublishing {
            // The beacons' states (and Home Assistant's configs) are this aggregator's to publish now: all of them, afresh.
            var changes = PresenceBoard.Changes()
            changes.beacons = pipeline.registry.beacons.keys.sorted().map(beaconState(of:))
            messages += stateMessages(changes) + zoneStateMessages(zones.map.zones.keys.sorted())
            let mine = ownsUser
            messages += homeAssistant?.update(registry: pipeline.registry, board: board, at: now, owns: mine, configs: true) ?? []
        } else if !resumed.isEmpty {
            messages += homeAssistant?.follow(resumed.map(\.user), events: [], registry: pipeline.registry, board: board, at: now) ?? []
        }
        if !messages.isEmpty { actions.append(record(messages: messages, decidedAt: now)) }
        return (resumed.count, leaving)
    }

    /// `own(_:at:)` with the grant of `shards` and the sessions and zone stays the database holds,
    /// the venue shared or not as the last grant said.
    public mutating func own(_ shards: ShardSet, sessions: [Presence], zoneSessions: [ZoneSession] = [], at now: Int64) -> [Action] {
        own(ShardGrant(shards: shards, sessions: sessions, zoneSessions: zoneSessions, shared: shared), at: now)
    }

    /// What a start resumes once `grant` says which shards are the core's: of what it would have
    /// resumed (`given`: this aggregator's journal laid over its database), the sessions and stays
    /// of the grant's shards, by shard, then the grant's of the users of those shards it holds
    /// none of.
    static func resumption(of grant: ShardGrant, from given: Resumption, homes: [String: Int]) -> Resumption {
        let home = { (user: String) in homes[user] ?? 0 }
        let sessions = Dictionary(grouping: given.sessions) { home($0.user) }
        let stays = Dictionary(grouping: given.zoneSessions) { home($0.user) }
        var resumption = Resumption(sessions: grant.shards.sorted.flatMap { sessions[$0] ?? [] },
                                    zoneSessions: grant.shards.sorted.flatMap { stays[$0] ?? [] })
        let held = Set(resumption.sessions.map(\.user)).union(resumption.zoneSessions.map(\.user))
        let isNew = { (user: String) in grant.shards.contains(home(user)) && !held.contains(user) }
        resumption.sessions += grant.sessions.filter { isNew($0.user) }
        resumption.zoneSessions += grant.zoneSessions.filter { isNew($0.user) }
        return resumption
    }

    /// Whether this core decides for a user (their home shard is its own), apart from the core.
    var ownsUser: @Sendable (String) -> Bool {
        guard let owned = pipeline.owned else { return { _ in true } }
        let homes = homes
        return { owned.contains(homes[$0] ?? 0) }
    }

    /// Whether this core publishes the beacons' states: alone, or owning shard 0.
    var publishesBeacons: Bool {
        guard let owned = pipeline.owned else { return true }
        return owned.contains(0) || ownsEveryShard
    }

    /// Who is at `beacon`: this core's users, and (sharing) the others' as their states say.
    func beaconState(of beacon: String) -> BeaconState {
        let mine = board.state(of: beacon)
        guard !ownsEveryShard else { return mine }
        let theirs = others.users(at: beacon)
        guard !theirs.isEmpty else { return mine }
        return BeaconState(beacon: beacon, users: Set(mine.users).union(theirs).sorted())
    }

    /// Another aggregator's retained state of `user` arrived: where they are counts in the beacons'
    /// states this core publishes. States of this core's own users (their echo) change nothing.
    mutating func othersState(user: String, payload: UnsafeRawBufferPointer, at now: Int64, into actions: inout [Action]) {
        guard !user.isEmpty, pipeline.registry.users[user] != nil, let owned = pipeline.owned, !owned.contains(homes[user] ?? 0),
              var state = OthersPlaces.state(of: user, in: payload) else { return }
        if let beacon = state.beacon, pipeline.registry.beacons[beacon] == nil { state.beacon = nil }
        let changed = others.set(user, to: state)
        guard !changed.isEmpty else { return }
        var updates: [PageUpdate] = [.user(state.beacon == nil ? UserState(user: user, beacon: nil, venue: nil, since: 0) : state,
                                           name: pipeline.registry.users[user]?.name)]
        if publishesBeacons {
            var changes = PresenceBoard.Changes()
            changes.beacons = beaconStates.changed(changed, at: now).map(beaconState(of:))
            var touchedZones: Set<String> = []
            for beacon in changed { touchedZones.formUnion(zones.map.zones(of: beacon)) }
            let messages = stateMessages(changes) + zoneStateMessages(zoneStates.changed(Array(touchedZones), at: now))
            if !messages.isEmpty { actions.append(record(messages: messages, decidedAt: now)) }
        }
        updates += changed.map { .beacon(beaconState(of: $0)) }
        if page != nil { actions.append(.page(updates)) }
    }

    /// Another aggregator's event arrived: the page's feed shows it beside this core's own (whose
    /// echo, and an event already shown, changes nothing).
    mutating func othersEvent(payload: UnsafeRawBufferPointer, at now: Int64, into actions: inout [Action]) {
        guard page != nil else { return }
        guard let event = try? PresenceEvent(payload: Array(payload)) else {
            return warn("event-unreadable", "ignored another aggregator's event that is not one", [:], at: now, into: &actions)
        }
        guard pipeline.registry.users[event.user] != nil, !ownsUser(event.user), page?.contains(event: event.id) == false,
              let entry = page?.add(event, registry: pipeline.registry) else { return }
        actions.append(.page([.event(entry)]))
    }

    /// Whether this core decides for every shard of the venue (then what it shows is the whole venue).
    var ownsEveryShard: Bool {
        guard let owned = pipeline.owned else { return true }
        return owned.count >= pipeline.registry.shards.count && (0 ..< pipeline.registry.shards.count).allSatisfy(owned.contains)
    }

    /// Forgets, without an event, the users that `isOthers` says another aggregator decides for,
    /// once their last sightings are saved exactly; returns how many.
    mutating func letGo(of isOthers: (String) -> Bool, into actions: inout [Action]) -> Int {
        let leaving = Set(pipeline.engine.trackedUsers.filter(isOthers)).union(board.users.filter(isOthers))
        guard !leaving.isEmpty else { return 0 }
        saveProgress(resolution: 0, into: &actions)
        pipeline.drop(users: leaving)
        zones.drop(users: leaving)
        for user in leaving.sorted() {
            // Where they are stays counted, as the next owner's states will say.
            _ = others.set(user, to: board.place(of: user))
            _ = board.forget(user: user)
        }
        flaps.forget(leaving)
        page?.forget(leaving)
        homeAssistant?.forget(users: leaving)
        if page != nil { actions.append(.page([.snapshot])) }
        return leaving.count
    }
}
