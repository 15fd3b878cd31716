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
}
