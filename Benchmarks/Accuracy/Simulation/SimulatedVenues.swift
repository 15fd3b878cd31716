import PresenceCore

/// The simulated venues the benchmark scores, built in code with fixed seeds so that every run
/// of the benchmark sees the same world.
enum SimulatedVenues {
    /// How big the crowded simulations are: 20 people for 2 h, or 8 for 20 min with `--quick`.
    struct Size {
        var people: Int
        var duration: Int64

        init(quick: Bool) {
            people = quick ? 8 : 20
            duration = quick ? 20 * 60_000 : 2 * 3_600_000
        }
    }

    static func scenarios(quick: Bool) -> [BenchScenario] {
        let size = Size(quick: quick)
        let still: Int64 = quick ? 15 * 60_000 : 3_600_000
        let hours = "\(size.people) people for \(DurationText.format(size.duration))"
        return [
            scenario("sim expo σ4", "expo: 20 booths 7 m apart (5×4 grid), a node at each, shadowing σ 4 dB (5 s), fading σ 2 dB, 30 % loss, \(hours), dwells 20–120 s",
                     expo(shadowing: 4, size: size), duration: size.duration),
            scenario("sim expo σ2", "the same expo and itineraries, shadowing σ 2 dB", expo(shadowing: 2, size: size), duration: size.duration),
            scenario("sim expo σ6", "the same expo and itineraries, shadowing σ 6 dB", expo(shadowing: 6, size: size), duration: size.duration),
            scenario("sim office", "office: 8 rooms 5×6 m on both sides of a corridor, 6 dB walls with 1 m doors, a node per room, \(hours), dwells 30–300 s, 1.5 m from the room's centre",
                     office(size: size), duration: size.duration),
            scenario("sim still iid", "one person still for \(DurationText.format(still)) 1 m from beacon a, 10 dB nearer than b; fading σ 4 dB per packet, no shadowing, no gain error",
                     stillPair(fading: 4, shadowing: 0), duration: still),
            scenario("sim still shadow", "the same, with the 4 dB as slow shadowing (σ 4 dB, 5 s) instead of per-packet fading",
                     stillPair(fading: 0, shadowing: 4), duration: still),
            scenario("sim carried", "the σ4 expo with every booth a beacon and every person carrying a scanner (contract's second mode)",
                     expo(shadowing: 4, size: size, carrying: .scanner), duration: size.duration),
        ]
    }

    private static func scenario(_ name: String, _ note: String, _ venue: Scenario, duration: Int64) -> BenchScenario {
        BenchScenario(name: name, note: note, dataset: nil) { [try SimulatedRecording.run(venue, name: name, duration: duration)] }
    }

    /// The seeds of a simulated venue: the world's (radio, where at a booth people stand) and the
    /// visitors' (when they come, where they go, how long they stay).
    struct Seeds {
        var world: UInt64
        var visitors: UInt64
    }

    /// Booths 7 m apart in a 5×4 grid, entered from the west side.
    static func expo(shadowing: Double, size: Size, carrying: Visitors.Carrying = .tag) -> Scenario {
        var radio = Scenario.Radio()
        radio.shadowingSigma = shadowing
        return expo(booths: boothGrid(columns: 5, rows: 4, gaps: 7 ... 7, seed: 0), radio: radio, size: size, carrying: carrying,
                    seeds: Seeds(world: 7, visitors: 11))
    }

    /// An expo hall: a booth at each of `booths` (a beacon with a node at it, or with an identity
    /// for carried scanners), entered from 5 m west of the westmost booth, midway up the hall;
    /// visitors stand `offset` m from the booth they visit.
    static func expo(booths: [Scenario.Point], radio: Scenario.Radio, size: Size, carrying: Visitors.Carrying = .tag, offset: Double = 1,
                     seeds: Seeds) -> Scenario {
        let beacons = booths.enumerated().map { index, booth in
            let number = index + 1
            let identity = carrying == .scanner ? "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:1:\(number)" : nil
            return Scenario.Beacon(key: "booth-\(number < 10 ? "0" : "")\(number)", x: booth.x, y: booth.y, identity: identity)
        }
        let nodes = carrying == .tag ? beacons.map { Scenario.Node(key: "node-\($0.key.dropFirst(6))", x: $0.x, y: $0.y, beacon: $0.key) } : []
        let ys = booths.map(\.y)
        let entrance = Scenario.Point(x: (booths.map(\.x).min() ?? 0) - 5, y: ((ys.min() ?? 0) + (ys.max() ?? 0)) / 2)
        let visitors = Visitors(count: size.people, entrance: entrance, arrivals: min(size.duration / 4, 300_000),
                                dwell: 20_000 ... 120_000, offset: offset, carrying: carrying, seed: seeds.visitors)
        return Scenario(venue: "expo", seed: seeds.world, radio: radio, beacons: beacons, nodes: nodes,
                        people: visitors.people(at: beacons, duration: size.duration))
    }

    /// Booth positions on a grid, row by row from the south-west corner, the gap between
    /// neighbouring columns and between neighbouring rows each drawn from `gaps` (m).
    static func boothGrid(columns: Int, rows: Int, gaps: ClosedRange<Double>, seed: UInt64) -> [Scenario.Point] {
        var random = RandomSource(seed: seed, labels: "booths")
        func offsets(_ count: Int) -> [Double] {
            var at = 0.0
            return (0 ..< count).map { index in
                if index > 0 { at += gaps.lowerBound + random.uniform() * (gaps.upperBound - gaps.lowerBound) }
                return at
            }
        }
        let xs = offsets(columns)
        return offsets(rows).flatMap { y in xs.map { Scenario.Point(x: $0, y: y) } }
    }

    /// Eight rooms, four north and four south of a 2 m corridor, separated by 6 dB walls; each
    /// room's corridor wall has a 1 m door.
    static func office(size: Size, radio: Scenario.Radio = Scenario.Radio(), seeds: Seeds = Seeds(world: 8, visitors: 12)) -> Scenario {
        var beacons: [Scenario.Beacon] = []
        var walls: [Scenario.Wall] = []
        for index in 0 ..< 4 {
            let x = Double(index) * 5
            beacons.append(Scenario.Beacon(key: "room-n\(index + 1)", x: x + 2.5, y: 5))
            beacons.append(Scenario.Beacon(key: "room-s\(index + 1)", x: x + 2.5, y: -3))
            for y in [0.0, 2.0] {
                walls.append(Scenario.Wall(from: .init(x: x, y: y), to: .init(x: x + 2, y: y), loss: 6))
                walls.append(Scenario.Wall(from: .init(x: x + 3, y: y), to: .init(x: x + 5, y: y), loss: 6))
            }
            if index > 0 {
                walls.append(Scenario.Wall(from: .init(x: x, y: 2), to: .init(x: x, y: 8), loss: 6))
                walls.append(Scenario.Wall(from: .init(x: x, y: -6), to: .init(x: x, y: 0), loss: 6))
            }
        }
        let nodes = beacons.map { Scenario.Node(key: "node-\($0.key.dropFirst(5))", x: $0.x, y: $0.y, beacon: $0.key) }
        let visitors = Visitors(count: size.people, entrance: Scenario.Point(x: -3, y: 1), arrivals: min(size.duration / 4, 300_000),
                                dwell: 30_000 ... 300_000, offset: 1.5, carrying: .tag, seed: seeds.visitors)
        return Scenario(venue: "office", seed: seeds.world, radio: radio, walls: walls, beacons: beacons, nodes: nodes,
                        people: visitors.people(at: beacons, duration: size.duration))
    }

    /// One person standing at beacon a: node a 1 m away, node b 2.85 m away on the other side, so
    /// that with path-loss exponent 2.2 b is heard 10 dB weaker on average. No body loss and no
    /// receiver gain error, so the 10 dB is exact and the noise is only what is asked for.
    static func stillPair(fading: Double, shadowing: Double) -> Scenario {
        var radio = Scenario.Radio()
        radio.fadingSigma = fading
        radio.shadowingSigma = shadowing
        radio.bodyLoss = 0
        radio.nodeGainSigma = 0
        let farther = 2.848 // 10^(10 / 22): 10 dB more path loss at exponent 2.2
        let person = Scenario.Person(user: "still", device: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:99", entrance: .init(x: 0, y: 0),
                                     stops: [Scenario.Stop(beacon: "a", dwell: 2 * 3_600_000, offset: 0.001)])
        return Scenario(venue: "pair", seed: 3, radio: radio,
                        beacons: [Scenario.Beacon(key: "a", x: 0, y: 0), Scenario.Beacon(key: "b", x: 0, y: -farther)],
                        nodes: [Scenario.Node(key: "node-a", x: 0, y: 1, beacon: "a"), Scenario.Node(key: "node-b", x: 0, y: -farther, beacon: "b")],
                        people: [person])
    }
}
