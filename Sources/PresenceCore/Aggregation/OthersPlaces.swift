/// Where the users other aggregators decide for are, as their retained states say
/// (`{p}/v1/state/users/{user}`), so that the aggregator that publishes the beacons' states lists
/// everyone at a beacon, and every aggregator's page shows the whole venue.
struct OthersPlaces: Sendable {
    private var places: [String: UserState] = [:]
    private var occupants: [String: Set<String>] = [:]

    /// `user` is as `state` says (nil, or no beacon: nowhere, or no longer another aggregator's);
    /// returns the beacons whose list changed.
    mutating func set(_ user: String, to state: UserState?) -> [String] {
        let before = places[user]?.beacon
        let state = state?.beacon == nil ? nil : state
        places[user] = state
        let after = state?.beacon
        guard before != after else { return [] }
        if let before { occupants[before]?.remove(user) }
        if let after { occupants[after, default: []].insert(user) }
        return [before, after].compactMap { $0 }
    }

    /// Who of the others is at `beacon`.
    func users(at beacon: String) -> Set<String> {
        occupants[beacon] ?? []
    }

    /// The others at a beacon, by user.
    var present: [UserState] {
        places.keys.sorted().compactMap { places[$0] }
    }

    /// The state a retained user state payload says for `user`: one at no beacon for an empty
    /// payload (the state deleted) or a `null` beacon; nil for a payload that is not a user state.
    static func state(of user: String, in payload: UnsafeRawBufferPointer) -> UserState? {
        guard !payload.isEmpty else { return UserState(user: user, beacon: nil, venue: nil, since: 0) }
        var beacon: String?
        var venue: String?
        var since: Int64 = 0
        var reader = JSONReader(payload)
        do throws(JSONReader.Failure) {
            try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
                if key.is("beacon"), try reader.peekKind() == .string {
                    beacon = try reader.readString()
                } else if key.is("venue"), try reader.peekKind() == .string {
                    venue = try reader.readString()
                } else if key.is("since"), try reader.peekKind() == .number {
                    since = try reader.readInteger() ?? 0
                } else {
                    try reader.skipValue()
                }
            }
        } catch {
            return nil
        }
        return UserState(user: user, beacon: beacon, venue: venue, since: since)
    }
}
