import Testing
@testable import PresenceCore

/// Node offsets from a recorded calibration walk (`presencectl calibrate`).
@Suite struct WalkCalibrationTests {
    static let start: Int64 = 1_763_774_700_000
    static let walker = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1"
    static let other = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"

    /// A recorded line: `batch` from `node` as `record` writes it, arrived at `received`.
    static func line(_ node: String, _ sightings: [Sighting], sent: Int64, received: Int64) -> [UInt8] {
        let payload = SightingBatch(node: node, seq: 1, sent: sent, sightings: sightings).encoded()
        return Recording.line(payload: payload, topic: AggregatorCoreTests.topics.sightings(node: node), received: received) ?? []
    }

    static func take(_ walk: inout WalkCalibration, _ lines: [[UInt8]]) {
        for line in lines {
            line.withUnsafeBytes { walk.take(line: $0) }
        }
    }

    // MARK: Simulated walk

    /// Six booths 5 m apart, each with its node (gains uniform in ±4 dB), and a walker who stops a
    /// minute at each, 1 m from the booth, facing it, in a steady room: 2 dB of fading per packet,
    /// 0.5 dB of slow shadowing. (With 2 dB of slow shadowing, a one-minute stay leaves errors of up
    /// to 2 dB: the walk should be made when the venue is quiet.)
    static func scenario(seed: UInt64) -> Scenario {
        var radio = Scenario.Radio()
        radio.nodeGainSigma = 0
        radio.nodeGainSpread = 4
        radio.shadowingSigma = 0.5
        radio.advertisingInterval = 250
        let booths = (0 ..< 6).map { Scenario.Beacon(key: "booth-\($0)", x: Double($0) * 5, y: 0) }
        let walker = Scenario.Person(user: "walker", device: walker, arrive: 2_000, entrance: .init(x: -5, y: 0),
                                     stops: booths.map { Scenario.Stop(beacon: $0.key, dwell: 60_000) })
        return Scenario(venue: "expo", seed: seed, radio: radio, beacons: booths,
                        nodes: booths.map { Scenario.Node(key: "node-\($0.key.dropFirst(6))", x: $0.x, y: $0.y, beacon: $0.key) }, people: [walker])
    }

    @Test(arguments: [23, 5, 11, 40] as [UInt64])
    func nodeGainsDrawnWithinFourDecibelsAreRecoveredWithinOne(seed: UInt64) throws {
        let scenario = Self.scenario(seed: seed)
        var simulator = try VenueSimulator(scenario: scenario, start: Self.start)
        let registry = Registry(beacons: scenario.beacons.map { .init(key: $0.key) },
                                nodes: scenario.nodes.map { .init(key: $0.key, beacon: $0.beacon, rssiOffset: 3) },
                                users: [.init(key: "walker")], devices: [.init(identity: Self.walker, user: "walker")])
        // Record every node's batches every 500 ms, and note where the walker truly stood.
        var lines: [[UInt8]] = []
        var dwelling: [String: (first: Int64, last: Int64)] = [:]
        for time in stride(from: Self.start + 500, through: Self.start + 420_000, by: 500) {
            let heard = simulator.advance(to: time)
            for node in scenario.nodes {
                lines.append(Self.line(node.key, heard.filter { $0.node == node.key }.map(\.sighting), sent: time, received: time + 20))
            }
            if case .some(.some(let beacon)) = simulator.truth(at: time)["walker"] {
                dwelling[beacon] = (dwelling[beacon]?.first ?? time, time)
            }
        }
        let origin = Self.start + 520
        let stays = dwelling.map { WalkCalibration.Stay(beacon: $0.key, from: $0.value.first - origin, to: $0.value.last - origin) }
        #expect(stays.count == 6)
        var walk = try WalkCalibration(registry: registry, devices: [Self.walker], stays: stays)
        Self.take(&walk, lines)
        let figures = walk.figures()
        #expect(figures.map(\.node) == scenario.nodes.map(\.key))
        let gains = scenario.nodes.map { simulator.gain(of: $0.key) }
        #expect((gains.max() ?? 0) - (gains.min() ?? 0) > 2.5, "the draw spreads the gains: \(gains)")
        let middle = try #require(gains.median())
        for (figure, gain) in zip(figures, gains) {
            #expect(figure.readings > 100)
            let offset = try #require(figure.offset)
            // A node that hears `gain` dB hot needs −gain, relative to the middle node; registered offsets play no part.
            #expect(abs(offset - (middle - gain)) < 1, "\(figure.node): offset \(offset), true \(middle - gain) median \(figure.median ?? 0) gain \(gain) n \(figure.readings)")
        }
    }

    // MARK: Hand-built readings

    /// Booths a, b and c, each with its node; the walker and another person's tag.
    static let registry = Registry(
        beacons: [.init(key: "a"), .init(key: "b"), .init(key: "c")],
        nodes: [.init(key: "node-a", beacon: "a"), .init(key: "node-b", beacon: "b"), .init(key: "node-c", beacon: "c")],
        users: [.init(key: "walker"), .init(key: "bob")],
        devices: [.init(identity: walker, user: "walker"), .init(identity: other, user: "bob", tx: -40)])

    /// The walker stands at a from 10 s to 70 s and at b from 100 s to 160 s. At a, node-a reads
    /// a path loss of 1 dB; at b, node-b reads 5 dB. Everything else (readings in the trimmed
    /// ends, outside the stays, of the other tag, of node-b while the walker is at a, of node-c)
    /// is far off. node-b's clock is ten minutes slow (its readings are corrected, as the aggregator
    /// corrects them) and its frames state no tx (the default stands in).
    static func recording() -> [[UInt8]] {
        let status = Array(#"{"received":\#(start),"topic":"presence/v1/nodes/node-a/status","v":1,"state":"online"}"#.utf8)
        var lines: [[UInt8]] = [status]
        for second in stride(from: Int64(1), through: 200, by: 1) {
            let time = start + second * 1_000
            let atA = (10 ... 70).contains(second), atB = (100 ... 160).contains(second)
            let trimmed = (10 ..< 15).contains(second) || (66 ... 70).contains(second) || (100 ..< 105).contains(second) || (155 ... 160).contains(second)
            let walkerAtA = atA && !trimmed ? -60 : -20
            let walkerAtB = atB && !trimmed ? -64 : -20
            lines.append(line("node-a", [Sighting(ts: time, id: walker, rssi: walkerAtA, tx: -59), Sighting(ts: time, id: other, rssi: -90, tx: -59)],
                              sent: time, received: time + 30))
            let slow = time - 600_000
            lines.append(line("node-b", [Sighting(ts: slow, id: walker, rssi: walkerAtB), Sighting(ts: slow, id: other, rssi: -90, tx: -70)],
                              sent: slow, received: time + 30))
            lines.append(line("node-c", [Sighting(ts: time, id: walker, rssi: -20, tx: -59)], sent: time, received: time + 30))
        }
        return lines
    }

    @Test func onlyTheWalkersReadingsWithinTheTrimmedStaysAtTheNodesBeaconCount() throws {
        let stays = [WalkCalibration.Stay(beacon: "a", from: 10_000, to: 70_000), WalkCalibration.Stay(beacon: "b", from: 100_000, to: 160_000)]
        var walk = try WalkCalibration(registry: Self.registry, devices: [Self.walker], stays: stays)
        Self.take(&walk, Self.recording())
        #expect(walk.origin == Self.start, "the status line is the first line")
        let figures = walk.figures()
        #expect(figures.map(\.node) == ["node-a", "node-b"], "node-c stands at no stay's beacon")
        let a = try #require(figures.first), b = try #require(figures.last)
        // One reading a second: at a from 15 s to 65 s; at b, dated 30 ms after each second, from 105 s to 154 s.
        #expect(a.readings == 51 && b.readings == 50, "\(a.readings) and \(b.readings) readings")
        #expect(a.median == 1 && b.median == 5 && a.spread == 0)
        #expect(a.offset == -2 && b.offset == 2, "node-a hears 2 dB hot, node-b 2 dB cold")
    }

    @Test func theOtherTagIsNotTheWalker() throws {
        let stays = [WalkCalibration.Stay(beacon: "a", from: 10_000, to: 70_000), WalkCalibration.Stay(beacon: "b", from: 100_000, to: 160_000)]
        var walk = try WalkCalibration(registry: Self.registry, devices: [Self.other], stays: stays)
        Self.take(&walk, Self.recording())
        let figures = walk.figures()
        #expect(figures.map(\.readings) == [51, 50])
        #expect(figures.map(\.median) == [50, 50], "the registered tx (-40) wins over the frame's")
    }

    @Test func oneNodeWithEnoughReadingsGetsNoOffset() throws {
        let stays = [WalkCalibration.Stay(beacon: "a", from: 10_000, to: 70_000), WalkCalibration.Stay(beacon: "b", from: 100_000, to: 114_000)]
        var walk = try WalkCalibration(registry: Self.registry, devices: [Self.walker], stays: stays)
        Self.take(&walk, Self.recording())
        let figures = walk.figures()
        #expect(figures.map(\.readings) == [51, 4])
        #expect(figures.allSatisfy { $0.offset == nil })
        #expect(figures.map(\.hasEnoughReadings) == [true, false])
    }

    @Test(arguments: [
        ("a=10s..70s", 10_000, 70_000),
        ("a=1.5s..1m", 1_500, 60_000),
        ("a=0..20", 0, 20_000),
    ])
    func staysAreRead(_ text: String, _ from: Int64, _ to: Int64) throws {
        #expect(try WalkCalibration.Stay(parsing: text) == WalkCalibration.Stay(beacon: "a", from: from, to: to))
    }

    @Test(arguments: ["a", "a=10s", "a=10s-70s", "A=10s..70s", "=10s..70s", "a=soon..70s", "a=10s..", "a=70s..10s", "a=10s..20s"])
    func badStaysAreRefusedNamingThem(_ text: String) {
        do {
            let stay = try WalkCalibration.Stay(parsing: text, what: "--at")
            Issue.record("'\(text)' was read as \(stay)")
        } catch {
            #expect(error.message.contains("--at '\(text)' is not valid"), "\(error.message)")
        }
    }

    @Test func aStayAtABeaconWithoutNodeOrUnregisteredIsRefused() {
        var registry = Self.registry
        registry.beacons["d"] = .init(key: "d")
        #expect(throws: ValueError.self) { try WalkCalibration(registry: registry, devices: [Self.walker], stays: [.init(beacon: "d", from: 0, to: 60_000)]) }
        #expect(throws: ValueError.self) { try WalkCalibration(registry: registry, devices: [Self.walker], stays: [.init(beacon: "e", from: 0, to: 60_000)]) }
    }
}
