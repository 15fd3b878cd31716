import Testing
@testable import PresenceCore

@Suite struct PositionEstimatorTests {
    /// Anchors at the corners of a 10 m square, with exact distances to (3, 4).
    static func anchors(to point: (x: Double, y: Double), error: Double = 0) -> [PositionEstimator.Anchor] {
        [(0.0, 0.0), (10, 0), (0, 10), (10, 10)].enumerated().map { index, corner in
            let exact = ((point.x - corner.0) * (point.x - corner.0) + (point.y - corner.1) * (point.y - corner.1)).squareRoot()
            return PositionEstimator.Anchor(x: corner.0, y: corner.1, floor: index == 3 ? 2 : 1, distance: exact * (1 + (index % 2 == 0 ? error : -error)))
        }
    }

    @Test func exactDistancesGiveThePoint() throws {
        let position = try #require(PositionEstimator.estimate(Self.anchors(to: (3, 4))))
        #expect(abs(position.x - 3) < 0.01 && abs(position.y - 4) < 0.01)
        #expect(position.floor == 1)
        // Distances from RSSI are uncertain by about 30 %: 5 to 9 m away, that is about 2 m.
        #expect(position.accuracy > 1 && position.accuracy < 3, "\(position.accuracy)")
    }

    @Test func noisyDistancesStayCloseAndWorseThanExpectedOnesSayTheyAreLessSure() throws {
        let exact = try #require(PositionEstimator.estimate(Self.anchors(to: (3, 4))))
        let noisy = try #require(PositionEstimator.estimate(Self.anchors(to: (3, 4), error: 0.2)))
        let miss = ((noisy.x - 3) * (noisy.x - 3) + (noisy.y - 4) * (noisy.y - 4)).squareRoot()
        #expect(miss < 2.5)
        let wild = try #require(PositionEstimator.estimate(Self.anchors(to: (3, 4), error: 0.6)))
        #expect(wild.accuracy > exact.accuracy * 1.5)
    }

    @Test func fewAnchorsFallBackToTheWeightedCentroid() throws {
        let one = try #require(PositionEstimator.estimate([.init(x: 2, y: 2, floor: nil, distance: 1.5)]))
        #expect(one.x == 2 && one.y == 2 && one.accuracy == 1.5)
        let two = try #require(PositionEstimator.estimate([.init(x: 0, y: 0, floor: nil, distance: 1), .init(x: 10, y: 0, floor: nil, distance: 9)]))
        #expect(two.x < 1 && two.y == 0)
        #expect(PositionEstimator.estimate([]) == nil)
    }

    @Test func theFloorIsTheWeightedVoteATieGoingToTheLowerFloor() {
        func anchor(_ floor: Int?) -> PositionEstimator.Anchor { .init(x: 0, y: 0, floor: floor, distance: 1) }
        #expect(PositionEstimator.floorVote([anchor(2), anchor(1), anchor(2)], weights: [1, 1.5, 1]) == 2)
        #expect(PositionEstimator.floorVote([anchor(2), anchor(1)], weights: [1, 1]) == 1, "a tie")
        #expect(PositionEstimator.floorVote([anchor(nil), anchor(3)], weights: [5, 1]) == 3)
        #expect(PositionEstimator.floorVote([anchor(nil)], weights: [1]) == nil)
        // The same floor as a dictionary of each floor's summed weights gives, whatever the order.
        var generator = SystemRandomNumberGenerator()
        for _ in 0 ..< 500 {
            let anchors = (0 ..< Int.random(in: 1 ... 6, using: &generator)).map { _ in anchor(Bool.random(using: &generator) ? nil : Int.random(in: -1 ... 2, using: &generator)) }
            let weights = anchors.map { _ in Double(Int.random(in: 1 ... 4, using: &generator)) / 4 }
            var votes: [Int: Double] = [:]
            for (anchor, weight) in zip(anchors, weights) {
                if let floor = anchor.floor { votes[floor, default: 0] += weight }
            }
            let expected = votes.max { ($0.value, -$0.key) < ($1.value, -$1.key) }?.key
            #expect(PositionEstimator.floorVote(anchors, weights: weights) == expected, "\(anchors.map(\.floor)) \(weights)")
        }
    }
}

@Suite struct EnginePositionTests {
    @Test func theEngineEstimatesWhereAUserIsFromTheNodesThatHearThem() throws {
        let registry = Registry(
            beacons: [.init(key: "a", x: 0, y: 0), .init(key: "b", x: 10, y: 0), .init(key: "c", x: 0, y: 10)],
            nodes: [.init(key: "na", beacon: "a", x: 0, y: 0), .init(key: "nb", beacon: "b", x: 10, y: 0), .init(key: "nc", beacon: "c")],
            users: [.init(key: "alice")], devices: [.init(identity: "mac:00:11:22:33:44:55", user: "alice")])
        var matcher = ObservationMatcher(registry: registry)
        var engine = PresenceEngine(now: 0)
        // About 2 m from a, 8 m from b and c: -59 - 20 log10(d).
        for t in stride(from: Int64(0), to: 5_000, by: 500) {
            for (node, rssi) in [("na", -65), ("nb", -77), ("nc", -77)] {
                let sighting = Sighting(ts: t, id: "mac:00:11:22:33:44:55", rssi: rssi, tx: -59)
                engine.ingest(try matcher.match(sighting, node: node, time: t).get())
            }
            _ = engine.advance(to: t)
        }
        let position = try #require(engine.position(of: "alice"))
        #expect(position.x < 4 && position.y < 4, "\(position)")
        #expect(engine.position(of: "bob") == nil)
    }
}

@Suite struct NearestReadingTests {
    /// A present user's ranging reads the nearest reading of their own beacon alone: the same
    /// score, reading and tie-break as scoring every beacon gives it, on random readings with
    /// ties (two nodes at booth a, one each at b and c).
    @Test func theNearestReadingOfTheUsersBeaconIsTheOneAllBeaconsScoresGive() throws {
        let registry = Registry(
            beacons: [.init(key: "a"), .init(key: "b"), .init(key: "c")],
            nodes: [.init(key: "na1", beacon: "a"), .init(key: "na2", beacon: "a"), .init(key: "nb", beacon: "b"), .init(key: "nc", beacon: "c")],
            users: [.init(key: "alice")], devices: [.init(identity: "mac:00:11:22:33:44:55", user: "alice")])
        var generator = SystemRandomNumberGenerator()
        var compared = 0
        for _ in 0 ..< 200 {
            var matcher = ObservationMatcher(registry: registry)
            var engine = PresenceEngine(now: 0)
            for t in stride(from: Int64(0), to: 3_000, by: 500) {
                for node in ["na1", "na2", "nb", "nc"] where Bool.random(using: &generator) || t == 0 {
                    let sighting = Sighting(ts: t, id: "mac:00:11:22:33:44:55", rssi: -60 - 4 * Int.random(in: 0 ... 3, using: &generator), tx: -59)
                    engine.ingest(try matcher.match(sighting, node: node, time: t).get())
                }
                _ = engine.advance(to: t)
            }
            let links = try #require(engine.tracks.first { $0.user == "alice" }).links
            for here in ["a", "b", "c"] {
                let all = engine.beaconScores(links, here: here, at: engine.now).first { $0.beacon == here }
                let alone = engine.nearestReading(of: here, in: links, at: engine.now)
                #expect(alone?.beacon == all?.beacon && alone?.pathLoss == all?.pathLoss && alone?.link == all?.link, "\(here): \(String(describing: alone)) against \(String(describing: all))")
                if all != nil { compared += 1 }
            }
        }
        #expect(compared > 300, "too few beacons heard to compare: \(compared)")
    }
}
