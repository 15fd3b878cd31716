extension PresenceEngine {
    /// The present users whose tracks took an observation after `mark` (an earlier value of
    /// `touches`), in the order they were first heard, with their estimated positions (nil where
    /// no reading has coordinates). Costs a pass over the tracks, and a position estimate for each
    /// touched one only.
    public func positions(touchedAfter mark: UInt64) -> [(user: String, position: Position)] {
        var result: [(user: String, position: Position)] = []
        // Through the buffer: a track read through the array's subscript is copied whole.
        tracks.withUnsafeBufferPointer { tracks in
            for index in tracks.indices where tracks[index].touched > mark && tracks[index].isPresent && !tracks[index].isFree {
                if let position = estimatedPosition(tracks[index].links, at: now, requireAll: false) { result.append((tracks[index].user, position)) }
            }
        }
        return result
    }

    /// How near each present user whose track took an observation after `mark` is to their beacon
    /// now: the smoothed RSSI of the nearest fresh reading of it, with its distance and proximity
    /// (as an enter reports them). Users with no fresh reading of their beacon are left out.
    public func rangings(touchedAfter mark: UInt64) -> [(user: String, ranging: Ranging)] {
        var result: [(user: String, ranging: Ranging)] = []
        tracks.withUnsafeBufferPointer { tracks in
            for index in tracks.indices where tracks[index].touched > mark && !tracks[index].isFree {
                guard let beacon = tracks[index].presence?.beacon,
                      let score = nearestReading(of: beacon, in: tracks[index].links, at: now) else { continue }
                let link = tracks[index].links[score.link]
                let distance = configuration.distance(pathLoss: score.pathLoss)
                result.append((tracks[index].user, Ranging(rssi: link.smoother.value, distance: distance,
                                                           proximity: link.txKnown ? Proximity(distance: distance) : .unknown)))
            }
        }
        return result
    }

    /// The present users whose last sighting is to be saved: among those heard after `mark`, each
    /// whose last sighting moved by `resolution` or more since it was last taken (every move with
    /// 0), so that a crowd being heard costs a few writes a second; and everyone not heard since
    /// `mark` whose last sighting moved at all, since it may be their last, which dates their exit
    /// (after a restart too). Marks what it returns as taken.
    public mutating func takeLastSeen(touchedAfter mark: UInt64, resolution: Int64) -> [(user: String, time: Int64)] {
        var taken: [(slot: Int, user: String, time: Int64)] = []
        // Read through an immutable buffer, then marked: a track read through a mutable one is copied whole.
        tracks.withUnsafeBufferPointer { tracks in
            for index in tracks.indices where !tracks[index].user.isEmpty {
                guard let lastSeen = tracks[index].presence?.lastSeen, lastSeen != tracks[index].lastSeenTaken else { continue }
                let quiet = tracks[index].touched <= mark
                guard quiet || resolution == 0 || lastSeen >= TimeBounds.sum(tracks[index].lastSeenTaken, resolution) else { continue }
                taken.append((index, tracks[index].user, lastSeen))
            }
        }
        for entry in taken { tracks[entry.slot].lastSeenTaken = entry.time }
        return taken.map { ($0.user, $0.time) }
    }
}
