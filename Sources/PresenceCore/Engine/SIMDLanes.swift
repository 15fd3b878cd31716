/// Lane-by-lane writes to a vector that is built up one slot at a time. The subscript's setter
/// keeps the vector in registers: each lane it sets goes through memory and the whole vector is
/// read back, a stalled load per lane. These write the lane in memory and leave the vector there
/// until it is read whole.
extension SIMD8 {
    /// Sets lane `lane` to `value`.
    @inline(__always)
    mutating func setLane(_ lane: Int, _ value: Scalar) {
        precondition(lane >= 0 && lane < 8)
        withUnsafeMutablePointer(to: &self) { vector in
            UnsafeMutableRawPointer(vector).assumingMemoryBound(to: Scalar.self)[lane] = value
        }
    }

    /// Lane `lane`, read from memory.
    @inline(__always)
    mutating func lane(_ lane: Int) -> Scalar {
        precondition(lane >= 0 && lane < 8)
        return withUnsafeMutablePointer(to: &self) { vector in
            UnsafeMutableRawPointer(vector).assumingMemoryBound(to: Scalar.self)[lane]
        }
    }
}
