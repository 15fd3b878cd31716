import Foundation
import Testing
@testable import PresenceCore

/// The `hmm` decision's layout term on its own: how well a step's readings fit each place.
@Suite struct LayoutFitTests {
    /// Nodes every 5 m along a line, each at a place numbered 1…6; readings from the path-loss
    /// model (n = 2) for a user 1 m from `place`, a tag `power` dB hotter than assumed, and
    /// `blocked` dB more loss at the node of place `shadowed`.
    private static func fit(userAt place: Int32, power: Double = 0, shadowed: Int32 = 0, blocked: Double = 0) -> LayoutFit {
        var fit = LayoutFit()
        fit.begin()
        let user = 5 * Double(place - 1)
        for node in Int32(1) ... 6 {
            let x = 5 * Double(node - 1)
            let distance = ((x - user) * (x - user) + 1).squareRoot()
            let loss = 20 * log10(distance) - power + (node == shadowed ? blocked : 0)
            fit.add(node: Coordinates(x: x, y: 0), loss: loss, place: node, at: Coordinates(x: x, y: 0))
        }
        return fit
    }

    @Test(arguments: [Int32(1), 2, 3, 4, 5, 6])
    func thePlaceTheUserIsAtFitsBestWhateverTheTagsPower(place: Int32) throws {
        var fit = Self.fit(userAt: place, power: 7)
        #expect(fit.isUsable)
        var misfits: [Double] = []
        for candidate in Int32(1) ... 6 {
            let misfit = fit.misfit(of: candidate, exponent: 2)
            misfits.append(try #require(misfit))
        }
        let best = try #require(misfits.indices.min { misfits[$0] < misfits[$1] })
        #expect(best == Int(place) - 1, "misfits \(misfits)")
        #expect(misfits[best] < 0.1, "a model reading fits almost perfectly: \(misfits[best])")
    }

    /// The misfit of one position against its definition, the median residual as the offset:
    /// readings of every count from 3 to 30, at random, ties among them, in every order.
    @Test func theOffsetIsTheMedianResidualWhateverTheReadingsOrder() throws {
        var random = RandomSource(seed: 35)
        for trial in 0 ..< 2_000 {
            var fit = LayoutFit()
            fit.begin()
            let count = 3 + trial % 28
            var residuals: [Double] = []
            for _ in 0 ..< count {
                // Whole decibels at a node 1 m away (no distance term), so that ties are common.
                let loss = Double(random.next() % (trial % 2 == 0 ? 6 : 60))
                fit.add(node: Coordinates(x: 1, y: 0), loss: loss, place: 1, at: Coordinates(x: 0, y: 0))
                residuals.append(loss)
            }
            let offset = residuals.sorted()[count / 2]
            let expected = residuals.reduce(0) { $0 + log(1 + (($1 - offset) / LayoutFit.spread) * (($1 - offset) / LayoutFit.spread)) }
            let found = fit.misfit(of: 1, exponent: 2)
            let misfit = try #require(found)
            #expect(abs(misfit - expected) < 1e-9, "\(residuals): \(misfit) against \(expected)")
        }
    }

    @Test func aBodyInFrontOfOneNodeCostsLittle() throws {
        var clear = Self.fit(userAt: 3)
        var shadowed = Self.fit(userAt: 3, shadowed: 4, blocked: 10)
        let three = shadowed.misfit(of: 3, exponent: 2), four = shadowed.misfit(of: 4, exponent: 2), unshadowed = clear.misfit(of: 3, exponent: 2)
        let atThree = try #require(three)
        let atFour = try #require(four)
        #expect(atThree < atFour, "the shadowed neighbour does not win: \(atThree) against \(atFour)")
        #expect(atThree < 2.5, "one 10 dB outlier costs log(1 + 6.25), not its square: \(atThree)")
        #expect(try #require(unshadowed) < atThree)
    }

    @Test func aPlaceWithoutPositionOrTooFewReadingsIsLeftOut() {
        var fit = LayoutFit()
        fit.begin()
        fit.add(node: Coordinates(x: 0, y: 0), loss: 10, place: 1, at: Coordinates(x: 0, y: 0))
        fit.add(node: Coordinates(x: 5, y: 0), loss: 20, place: 2, at: Coordinates(x: 5, y: 0))
        #expect(!fit.isUsable, "two readings fit any place about as well")
        fit.add(node: Coordinates(x: 10, y: 0), loss: .infinity, place: 3, at: Coordinates(x: 10, y: 0))
        #expect(!fit.isUsable, "a reading that is not a number is not kept")
        fit.add(node: Coordinates(x: 10, y: 0), loss: 25, place: 3, at: Coordinates(x: 10, y: 0))
        #expect(fit.isUsable)
        let unknown = fit.misfit(of: 9, exponent: 2)
        #expect(unknown == nil)
        fit.begin()
        #expect(!fit.isUsable, "a new step forgets the last one's readings")
    }

    /// Three nodes on each of two floors, one above the other; the user by the first node of
    /// floor 0, heard 15 dB fainter through the floor above. Each place is fitted to its own
    /// floor's nodes only, and a floor with too few readings leaves its places unfitted.
    @Test func aPlaceIsFittedToTheNodesOnItsOwnFloor() throws {
        var fit = LayoutFit()
        fit.begin()
        for floor in 0 ... 1 {
            for index in 0 ..< 3 {
                let x = 5 * Double(index)
                let at = Coordinates(x: x, y: 0, floor: floor)
                let loss = 20 * log10(max(1, x)) + (floor == 1 ? 15 : 0)
                fit.add(node: at, loss: loss, place: Int32(1 + 3 * floor + index), at: at)
            }
        }
        let below = fit.misfit(of: 1, exponent: 2), beside = fit.misfit(of: 3, exponent: 2)
        #expect(try #require(below) < 0.01, "the floor above's fainter readings are not this floor's")
        #expect(try #require(below) < (try #require(beside)))
        fit.begin()
        for index in 0 ..< 3 {
            let at = Coordinates(x: 5 * Double(index), y: 0, floor: 0)
            fit.add(node: at, loss: 20 * log10(max(1, 5 * Double(index))), place: Int32(1 + index), at: at)
        }
        let upstairs = Coordinates(x: 0, y: 0, floor: 1)
        fit.add(node: upstairs, loss: 15, place: 4, at: upstairs)
        let unfitted = fit.misfit(of: 4, exponent: 2)
        #expect(unfitted == nil, "one reading on its floor fits nothing")
    }

    /// The misfit is its definition: residuals about the model, offset by their median, each
    /// adding log(1 + (residual / spread)²); residuals far beyond any radio's (1e30 and 1e100
    /// dB, whose costs' product overflows a double) are summed without overflow.
    @Test(arguments: [0.0, 3_000.0, 1e30, 1e100])
    func theMisfitIsTheSumOfEachReadingsCauchyCost(outlier: Double) throws {
        var fit = LayoutFit()
        fit.begin()
        let nodes = (0 ..< 23).map { Coordinates(x: Double($0 % 5) * 4, y: Double($0 / 5) * 3) }
        let place = Coordinates(x: 6, y: 4)
        var residuals: [Double] = []
        for (index, node) in nodes.enumerated() {
            let loss = Double((index * 37) % 29) + (index.isMultiple(of: 4) ? outlier : 0)
            fit.add(node: node, loss: loss, place: 1, at: place)
            let distance = max(LayoutFit.nearest, ((node.x - place.x) * (node.x - place.x) + (node.y - place.y) * (node.y - place.y)).squareRoot())
            residuals.append(loss - 27 * log10(distance))
        }
        let median = residuals.sorted()[residuals.count / 2]
        let expected = residuals.reduce(0.0) { $0 + log1p(pow(($1 - median) / LayoutFit.spread, 2)) }
        let found = fit.misfit(of: 1, exponent: 2.7)
        let misfit = try #require(found)
        #expect(misfit.isFinite)
        #expect(abs(misfit - expected) <= 1e-9 * expected, "\(misfit) against \(expected)")
    }
}
