extension PresenceEngine {
    /// Restores a session that was open when the aggregator stopped. The user is not timed out
    /// before `now + resumeGrace`, so that someone still there is heard again first.
    public mutating func resume(_ presence: Presence) {
        let index = trackIndex(for: presence.user)
        var track = takeTrack(index)
        track.presence = presence
        track.graceUntil = now + configuration.resumeGrace
        deadlines.set(index, deadline(of: track))
        putTrack(&track, index)
    }

    /// The registry holds `count` users: no more tracks are expected at once, and the cache of
    /// their slots grows to hold a device each (about one a user) without many sharing an entry.
    public mutating func setRegisteredUsers(_ count: Int) {
        registeredUsers = count
        slotCache.size(forDevices: count)
    }

    /// Takes the beacons' own settings and neighbours; every track is looked at again on the
    /// next `advance`, since what a move or a timeout needs may have changed.
    public mutating func setPlaces(_ places: PlacePolicies) {
        guard places != self.places else { return }
        self.places = places
        for index in tracks.indices where !tracks[index].isFree {
            tracks[index].candidate = nil
            tracks[index].evidence.removeAll()
        }
        healthChanged = true
    }

    /// Ends `user`'s session, if any, at `time` with `reason`, and forgets everything about the user.
    public mutating func remove(user: String, at time: Int64, reason: PresenceEvent.ExitReason) -> [PresenceEvent] {
        dropPending { $0.user == user }
        guard let index = trackIndex[user] else { return [] }
        let presence = tracks[index].presence
        tracks[index] = UserTrack(user: user)
        lookSoon(index)
        guard let presence else { return [] }
        return [exitEvent(presence, at: max(time, presence.entered), reason: reason)]
    }

    /// The users the engine keeps a track of (present, candidates, or recently heard).
    public var trackedUsers: Dictionary<String, Int>.Keys { trackIndex.keys }

    /// Forgets `users` without an event (their shard went to another aggregator, which resumes
    /// their sessions from the database).
    public mutating func drop(users: Set<String>) {
        guard !users.isEmpty else { return }
        dropPending { users.contains($0.user) }
        for user in users.sorted() {
            guard let index = trackIndex[user] else { continue }
            tracks[index] = UserTrack(user: user)
            lookSoon(index)
        }
    }

    /// Forgets a beacon: sessions there end with `removed`, its observations are dropped.
    public mutating func removeBeacon(_ beacon: String, at time: Int64) -> [PresenceEvent] {
        forget(at: time) { $0.beacon == beacon } presence: { $0.beacon == beacon } observation: { $0.beacon == beacon }
    }

    /// Forgets a device: a session it holds ends with `removed`, its observations are dropped.
    public mutating func removeDevice(_ device: String, at time: Int64) -> [PresenceEvent] {
        forget(at: time) { $0.device == device } presence: { $0.device == device } observation: { $0.device == device }
    }

    /// Drops the waiting observations that `condition` selects.
    private mutating func dropPending(where condition: (Observation) -> Bool) {
        var kept: [Pending] = []
        for entry in pending.unordered {
            if let observation = waiting.peek(entry), condition(observation) {
                _ = waiting.take(entry)
            } else {
                kept.append(entry)
            }
        }
        pending = PendingQueue(kept)
    }

    private mutating func forget(at time: Int64, link: (Link) -> Bool, presence: (Presence) -> Bool,
                                 observation: (Observation) -> Bool) -> [PresenceEvent] {
        var events: [PresenceEvent] = []
        for index in tracks.indices where !tracks[index].isFree {
            var track = takeTrack(index)
            track.links.removeAll(where: link)
            if let current = track.presence, presence(current) {
                events.append(exitEvent(current, at: max(time, current.entered), reason: .removed))
                track.presence = nil
                track.candidate = nil
            }
            putTrack(&track, index)
        }
        dropPending(where: observation)
        healthChanged = true
        return events
    }
}
