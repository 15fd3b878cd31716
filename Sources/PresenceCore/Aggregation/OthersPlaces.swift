/// Where the users other aggregators decide for are, as their retained states say
/// (`{p}/v1/state/users/{user}`), so that the aggregator that publishes the beacons' states lists
/// everyone at a beacon, not only its own shards' users.
struct OthersPlaces: Sendable {
    private var places: [String: String] = [:]
    private var occupants: [String: Set<String>] = [:]

    /// `user` is at `beacon` (nil: nowhere, or no longer another aggregator's); returns the beacons
    /// whose list changed.
    mutating func set(_ user: String, at beacon: String?) -> [String] {
        let before = places[user]
        guard before != beacon else { return [] }
        if let before { occupants[before]?.remove(user) }
        places[user] = beacon
        if let beacon { occupants[beacon, default: []].insert(user) }
        return [before, beacon].compactMap { $0 }
    }

    /// Who of the others is at `beacon`.
    func users(at beacon: String) -> Set<String> {
        occupants[beacon] ?? []
    }

    /// The beacon a retained user state names: nil for an empty payload (the state deleted), a
    /// `null` beacon, or a payload that is not a user state.
    static func beacon(in payload: UnsafeRawBufferPointer) -> String?? {
        guard !payload.isEmpty else { return .some(nil) }
        var beacon: String??
        var reader = JSONReader(payload)
        do throws(JSONReader.Failure) {
            try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
                guard key.is("beacon") else { return try reader.skipValue() }
                if try reader.peekKind() == .null {
                    try reader.skipValue()
                    beacon = .some(nil)
                } else {
                    beacon = .some(try reader.readString())
                }
            }
        } catch {
            return nil
        }
        return beacon
    }
}
