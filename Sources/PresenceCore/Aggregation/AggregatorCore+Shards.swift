/// Sharing a venue with other aggregators: which shards' users this core decides for.
extension AggregatorCore {
    /// The shards this core decides for now; nil: every shard (not sharing).
    public var ownedShards: ShardSet? { pipeline.owned }

    /// From `now` on the core decides for the users of `shards`. Users of shards it no longer owns
    /// are forgotten without an event once their last sightings are saved exactly (the next owner
    /// resumes them from the database). Users of shards it now owns resume their open sessions:
    /// those it parked at its start for a shard it owns for the first time, else `sessions` (what
    /// the database says, which the caller read after the shard was locked); a session whose user,
    /// device or beacon has gone ends now, as at a restart, and one whose user left meanwhile ends
    /// at its last sighting's timeout. `settled` says that ownership has been settled once since
    /// the start: sessions parked for shards not owned then are dropped (another aggregator has them).
    public mutating func own(_ shards: ShardSet, sessions: [Presence], settled: Bool = true, at now: Int64) -> [Action] {
        guard configuration.sharing, state != .finished else { return [] }
        let now = TimeBounds.clamped(now)
        let before = pipeline.owned ?? .empty
        let released = before.subtracting(shards)
        let adopted = shards.subtracting(before)
        var actions: [Action] = []
        let home = pipeline.registry.homeShards()
        let leaving = letGo(of: { !shards.contains(home[$0] ?? 0) }, into: &actions)
        pipeline.own(shards)
        var resumed: [Presence] = []
        for shard in adopted.sorted { resumed += parked.removeValue(forKey: shard) ?? [] }
        if settled { parked = [:] }
        // What the database says of users of these shards that this core does not hold: those of a
        // shard just taken, or re-homed here by a new shard count.
        let held = Set(resumed.map(\.user))
        resumed += sessions.filter { shards.contains(home[$0.user] ?? 0) && pipeline.engine.presences[$0.user] == nil && !held.contains($0.user) }
        if !resumed.isEmpty {
            let exits = pipeline.resume(resumed, at: pipeline.clock)
            _ = board.restore(resumed, beacons: [])
            decided(exits, at: now, into: &actions)
        }
        if !released.isEmpty || !adopted.isEmpty || !resumed.isEmpty {
            actions.append(.log(LogLine(.notice, "shards owned", [
                "shards": "\(shards)", "taken": "\(adopted)", "given_back": "\(released)", "sessions_resumed": "\(resumed.count)",
                "users_let_go": "\(leaving)",
            ])))
        }
        return actions
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
        for user in leaving.sorted() { _ = board.forget(user: user) }
        flaps.forget(leaving)
        page?.forget(leaving)
        if page != nil { actions.append(.page([.snapshot])) }
        return leaving.count
    }
}
