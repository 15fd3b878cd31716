import Testing
@testable import PresenceCore

/// Lanes written and read through memory are the vector's own lanes.
@Suite struct SIMDLanesTests {
    @Test func aLaneSetThroughMemoryIsTheLaneTheSubscriptReads() {
        var vector = SIMD8<Double>(repeating: .infinity)
        for lane in 0 ..< 8 where lane % 3 != 1 { vector.setLane(lane, Double(lane) * 1.5) }
        #expect(vector == SIMD8(0, .infinity, 3, 4.5, .infinity, 7.5, 9, .infinity))
        var integers = SIMD8<Int32>(1, 2, 3, 4, 5, 6, 7, 8)
        integers.setLane(7, integers.lane(7) + integers.lane(0))
        #expect(integers[7] == 9 && integers.lane(3) == 4)
    }
}
