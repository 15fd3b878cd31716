/// Lane-by-lane writes to a vector that is built up one slot at a time. The subscript's setter
/// keeps the vector in registers: each lane it sets goes through memory and the whole vector is
/// read back, a stalled load per lane. These write the lane's bytes in memory and leave the vector
/// there until it is read whole.
extension SIMD8 {
    /// Sets lane `lane` to `value`.
    @inline(__always)
    mutating func setLane(_ lane: Int, _ value: Scalar) {
        precondition(lane >= 0 && lane < 8)
        withUnsafeMutableBytes(of: &self) { $0.storeBytes(of: value, toByteOffset: lane * MemoryLayout<Scalar>.stride, as: Scalar.self) }
    }

    /// Lane `lane`, read where the vector lies (mutating only to read it in place, not a copy).
    @inline(__always)
    mutating func lane(_ lane: Int) -> Scalar {
        precondition(lane >= 0 && lane < 8)
        return withUnsafeBytes(of: &self) { $0.load(fromByteOffset: lane * MemoryLayout<Scalar>.stride, as: Scalar.self) }
    }
}
