/// Paces each beacon's retained state: a change goes out at once when the beacon's last state went
/// out at least `interval` ago; later changes within the interval wait and go out together, as one
/// state, when it has passed. A beacon's state lists everyone there, so a crowd arriving (2,000
/// enters at one booth within a few seconds) would otherwise republish a list of thousands of
/// users on every tick; paced, it costs one list a second, and a quiet venue sees no delay.
struct BeaconStateThrottle: Sendable {
    let interval: Int64
    private var sentAt: [String: Int64] = [:]
    private var waiting: Set<String> = []

    init(interval: Int64) {
        self.interval = max(0, interval)
    }

    /// Of `beacons`, whose state changed at `now`, those to publish now (sorted); the rest wait.
    mutating func changed(_ beacons: [String], at now: Int64) -> [String] {
        var admitted: [String] = []
        for beacon in beacons {
            if let last = sentAt[beacon], !hasPassed(since: last, at: now) {
                waiting.insert(beacon)
            } else {
                sentAt[beacon] = now
                waiting.remove(beacon)
                admitted.append(beacon)
            }
        }
        return admitted.sorted()
    }

    /// The waiting beacons whose interval has passed at `now` (all of them when `flush`), sorted;
    /// they count as sent now.
    mutating func due(at now: Int64, flush: Bool = false) -> [String] {
        guard !waiting.isEmpty else { return [] }
        let due = waiting.filter { flush || hasPassed(since: sentAt[$0] ?? .min, at: now) }.sorted()
        for beacon in due {
            waiting.remove(beacon)
            sentAt[beacon] = now
        }
        return due
    }

    /// Whether the interval has passed since `last`; a clock set back counts as passed, so that
    /// no state waits for the clock to catch up.
    private func hasPassed(since last: Int64, at now: Int64) -> Bool {
        let elapsed = TimeBounds.difference(now, last)
        return elapsed < 0 || elapsed >= interval
    }

    /// A beacon no longer registered: nothing more of it is published.
    mutating func forget(_ beacon: String) {
        sentAt[beacon] = nil
        waiting.remove(beacon)
    }
}
