import Testing
@testable import PresenceCore

/// The median by selection against the median of the sorted values, on arrays of every small
/// length with many ties (RSSI comes in whole dB), sorted, reversed and constant ones among them.
@Suite struct MedianTests {
    private static func sortedMedian(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    @Test func selectionGivesTheSortedMedianBitForBit() {
        var random = RandomSource(seed: 11, labels: "median")
        for count in 1 ... 64 {
            for spread in [1.0, 5, 40] {
                let values = (0 ..< count).map { _ in (random.uniform() * spread).rounded() - 70 }
                for shape in [values, values.sorted(), values.sorted().reversed()] {
                    #expect(shape.median()?.bitPattern == Self.sortedMedian(shape).bitPattern, "\(shape)")
                }
            }
            let constant = [Double](repeating: -63, count: count)
            #expect(constant.median() == -63)
        }
        #expect([Double]().median() == nil)
        #expect([-70.5, -60.25].median() == -65.375)
    }

    @Test func selectPlacesTheKthSmallestWithNothingOutOfPlace() {
        var random = RandomSource(seed: 12, labels: "select")
        let values = (0 ..< 301).map { _ in (random.uniform() * 30).rounded() }
        for k in [0, 1, 150, 299, 300] {
            var copy = values
            let selected = copy.withUnsafeMutableBufferPointer { $0.select(k) }
            #expect(selected == values.sorted()[k])
            #expect(copy[k] == selected)
            #expect(copy[..<k].allSatisfy { $0 <= selected } && copy[(k + 1)...].allSatisfy { $0 >= selected })
            #expect(copy.sorted() == values.sorted(), "selection only rearranges")
        }
    }
}
