import PresenceCore

/// Simulated people with itineraries: each arrives within the first minutes, then goes from
/// beacon to beacon (never the same twice in a row), dwelling a random while at each, until past
/// the end of the simulation. Every draw comes from a fixed seed.
struct Visitors {
    /// What each person carries: a tag heard by fixed nodes, or a scanner hearing the beacons.
    enum Carrying {
        case tag
        case scanner
    }

    var count: Int
    var entrance: Scenario.Point
    /// Arrivals spread uniformly over `0 ..< arrivals`, ms.
    var arrivals: Int64
    /// Dwell times drawn uniformly from this range, ms.
    var dwell: ClosedRange<Int64>
    /// How far from the beacon a person stands, m.
    var offset: Double
    var carrying: Carrying
    var seed: UInt64

    /// People whose itineraries cover at least `duration` ms.
    func people(at beacons: [Scenario.Beacon], duration: Int64) -> [Scenario.Person] {
        (1 ... count).map { number in
            let user = "visitor-\(number < 10 ? "0" : "")\(number)"
            var random = RandomSource(seed: seed, labels: "visitors", user)
            let arrive = Int64(random.uniform() * Double(arrivals))
            let speed = 1.0 + 0.4 * random.uniform()
            var stops: [Scenario.Stop] = []
            var here = entrance
            var previous: Int?
            var time = arrive
            while time < duration, !beacons.isEmpty {
                var pick = Int(random.uniform() * Double(beacons.count))
                if pick == previous { pick = (pick + 1) % beacons.count }
                let stay = dwell.lowerBound + Int64(random.uniform() * Double(dwell.upperBound - dwell.lowerBound))
                let there = Scenario.Point(x: beacons[pick].x, y: beacons[pick].y)
                time += Int64(distance(here, there) / speed * 1000) + stay
                stops.append(Scenario.Stop(beacon: beacons[pick].key, dwell: stay, offset: offset))
                here = there
                previous = pick
            }
            return Scenario.Person(
                user: user,
                device: carrying == .tag ? "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:\(number)" : nil,
                scanner: carrying == .scanner ? "badge-\(number)" : nil,
                arrive: arrive, entrance: entrance, speed: speed, stops: stops)
        }
    }

    private func distance(_ a: Scenario.Point, _ b: Scenario.Point) -> Double {
        ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
    }
}
