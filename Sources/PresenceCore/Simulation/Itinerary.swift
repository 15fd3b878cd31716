#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where one simulated person is over time: arriving at the entrance, walking to each stop,
/// dwelling there facing the beacon (or, if people turn, facing it first and then turning now and
/// then), walking out, and (if they repeat) coming back later. Built leg by leg as time goes on;
/// every draw comes from the person's own random streams.
struct Itinerary: Sendable {
    /// What a person is doing during a leg.
    enum Activity: Equatable, Sendable {
        case away
        case walking
        case dwelling(beacon: String)
    }

    struct Leg: Sendable {
        var start: Int64
        var end: Int64
        var from: Scenario.Point
        var to: Scenario.Point
        var activity: Activity
        /// Direction the person faces, radians.
        var heading: Double
    }

    /// Where the person is and what they do at one moment.
    struct Pose: Sendable {
        var position: Scenario.Point
        /// Direction the person faces, radians.
        var heading: Double
        var activity: Activity
    }

    private let person: Scenario.Person
    private let beacons: [String: Scenario.Beacon]
    /// Mean time between turns while dwelling, ms; 0: always facing the beacon.
    private let turnInterval: Int64
    private var random: RandomSource
    /// The turns' own stream, so that turning changes no stop, spot or dwell.
    private var turns: RandomSource
    private(set) var legs: [Leg] = []
    private var cursor = 0

    init(person: Scenario.Person, beacons: [String: Scenario.Beacon], seed: UInt64, turnInterval: Int64) {
        self.person = person
        self.beacons = beacons
        self.turnInterval = turnInterval
        random = RandomSource(seed: seed, labels: "itinerary", person.user)
        turns = RandomSource(seed: seed, labels: "turns", person.user)
        legs.append(Leg(start: .min / 2, end: person.arrive, from: person.entrance, to: person.entrance, activity: .away, heading: 0))
    }

    /// The person's pose at `time` (ms after the start); times must not go backwards by more than one leg.
    mutating func pose(at time: Int64) -> Pose {
        while legs[legs.count - 1].end <= time { planVisit() }
        while cursor > 0, legs[cursor].start > time { cursor -= 1 }
        while legs[cursor].end <= time { cursor += 1 }
        let leg = legs[cursor]
        let span = Double(max(1, leg.end - leg.start))
        let share = leg.activity == .walking ? min(1, max(0, Double(time - leg.start) / span)) : 0
        let position = Scenario.Point(x: leg.from.x + (leg.to.x - leg.from.x) * share, y: leg.from.y + (leg.to.y - leg.from.y) * share)
        return Pose(position: position, heading: leg.heading, activity: leg.activity)
    }

    /// Appends one visit: the walk through every stop and out, then the time away (for ever,
    /// unless the person repeats).
    private mutating func planVisit() {
        var time = legs[legs.count - 1].end
        var here = person.entrance
        for stop in person.stops {
            guard let beacon = beacons[stop.beacon] else { continue }
            let angle = random.uniform() * 2 * .pi
            let spot = Scenario.Point(x: beacon.x + stop.offset * cos(angle), y: beacon.y + stop.offset * sin(angle))
            time = walk(from: here, to: spot, at: time)
            dwell(at: spot, facing: Scenario.Point(x: beacon.x, y: beacon.y), stop: stop, from: time)
            time += stop.dwell
            here = spot
        }
        time = walk(from: here, to: person.entrance, at: time)
        let awayUntil = person.repeats ? time + person.away : .max / 2
        legs.append(Leg(start: time, end: awayUntil, from: person.entrance, to: person.entrance, activity: .away, heading: 0))
    }

    /// Appends the stay at `stop`: one leg facing the beacon, or, when people turn, a leg per
    /// heading, the first facing the beacon and each next one facing a direction drawn uniformly,
    /// after exponentially distributed intervals of mean `turnInterval`.
    private mutating func dwell(at spot: Scenario.Point, facing beacon: Scenario.Point, stop: Scenario.Stop, from time: Int64) {
        let end = time + stop.dwell
        var start = time
        var heading = atan2(beacon.y - spot.y, beacon.x - spot.x)
        repeat {
            var until = end
            if turnInterval > 0 {
                let interval = -log(1 - turns.uniform()) * Double(turnInterval)
                until = min(end, start + max(1, Int64(interval.rounded())))
            }
            legs.append(Leg(start: start, end: until, from: spot, to: spot, activity: .dwelling(beacon: stop.beacon), heading: heading))
            start = until
            if turnInterval > 0 { heading = turns.uniform() * 2 * .pi }
        } while start < end
    }

    private mutating func walk(from: Scenario.Point, to: Scenario.Point, at time: Int64) -> Int64 {
        let duration = Int64((from.distance(to: to) / person.speed * 1000).rounded())
        guard duration > 0 else { return time }
        legs.append(Leg(start: time, end: time + duration, from: from, to: to, activity: .walking, heading: atan2(to.y - from.y, to.x - from.x)))
        return time + duration
    }
}
