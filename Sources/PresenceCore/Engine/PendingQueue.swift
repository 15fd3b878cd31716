/// The engine's observations waiting for their time, taken in time order (ties in arrival order)
/// up to a bound. They are appended as they come, kept in that order, and only what falls due is
/// sorted, stably by time, a tick's worth at a time: one pass over what waits and one sort of a
/// small contiguous array, instead of a heap whose every removal walks its height through memory
/// that no longer fits in the cache (the queue holds about `lateness` of sightings, 200,000 at
/// 200,000 sightings/s).
struct PendingQueue: Sendable {
    private(set) var unordered: [Pending] = []
    /// The earliest time waiting, if anything waits.
    private(set) var earliest: Int64?

    init() {}

    init(_ entries: [Pending]) {
        unordered = entries
        earliest = entries.lazy.map(\.time).min()
    }

    var isEmpty: Bool { unordered.isEmpty }

    mutating func insert(_ entry: Pending) {
        unordered.append(entry)
        if entry.time < earliest ?? .max { earliest = entry.time }
    }

    /// Removes every entry whose time is at most `bound` and puts them in `due` (emptied first),
    /// smallest first, those of the same time in the order they came.
    mutating func takeDue(upTo bound: Int64, into due: inout [Pending]) {
        due.removeAll(keepingCapacity: true)
        guard let first = earliest, first <= bound else { return }
        var kept = 0
        var keptEarliest = Int64.max
        unordered.withUnsafeMutableBufferPointer { entries in
            for index in entries.indices {
                let entry = entries[index]
                if entry.time <= bound {
                    due.append(entry)
                } else {
                    entries[kept] = entry
                    kept += 1
                    keptEarliest = min(keptEarliest, entry.time)
                }
            }
        }
        unordered.removeLast(unordered.count - kept)
        earliest = kept > 0 ? keptEarliest : nil
        due.sort { $0.time < $1.time }
    }
}
