/// Where each user the board holds is, with the reading of the enter that put them there: one
/// array of entries and an index of them by user key. Two dictionaries of whole values kept up to
/// 2.7 buckets of 120 bytes per user (a dictionary grows by doubling and fills to three quarters);
/// here a bucket is 20 bytes and the entries grow as an array.
struct UserPlaces: Sendable {
    private struct Entry: Sendable {
        var state: UserState
        var reading: PresenceBoard.Reading?
    }

    /// Each user's entry in `entries`.
    private var slots: [String: Int32] = [:]
    private var entries: [Entry] = []

    /// The users held.
    var users: Dictionary<String, Int32>.Keys { slots.keys }

    func state(of user: String) -> UserState? {
        slots[user].map { entries[Int($0)].state }
    }

    func reading(of user: String) -> PresenceBoard.Reading? {
        slots[user].flatMap { entries[Int($0)].reading }
    }

    /// Sets the state of `state.user`, keeping their reading.
    mutating func update(_ state: UserState) {
        if let slot = slots[state.user] {
            entries[Int(slot)].state = state
        } else {
            slots[state.user] = Int32(entries.count)
            entries.append(Entry(state: state, reading: nil))
        }
    }

    /// Sets the reading of `user`, if held.
    mutating func setReading(_ reading: PresenceBoard.Reading?, of user: String) {
        guard let slot = slots[user] else { return }
        entries[Int(slot)].reading = reading
    }

    /// Forgets `user`: the last entry takes their place.
    mutating func remove(_ user: String) {
        guard let slot = slots.removeValue(forKey: user) else { return }
        let last = entries.removeLast()
        guard Int(slot) < entries.count else { return }
        entries[Int(slot)] = last
        slots[last.state.user] = slot
    }
}
