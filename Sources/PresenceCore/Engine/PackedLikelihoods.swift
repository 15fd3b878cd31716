#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One step's likelihoods (one per slot of a `PlaceBelief`) in a byte each, as minus their natural
/// logarithm in sixteenths of a nat: 0 is a likelihood of 1, 254 about 1.3e-7 (anything less
/// likely is told apart no further), 255 none at all (a free slot). A window of steps costs 8
/// bytes a step instead of 32, and a likelihood comes back within 1/32 nat of what was kept.
struct PackedLikelihoods: Sendable, Equatable {
    private(set) var codes: SIMD8<UInt8>

    /// Steps of a nat that one code stands for.
    private static let perNat: Float = 16
    /// Each code's likelihood.
    private static let likelihoods: [Float] = (0 ..< 256).map { $0 == 255 ? 0 : expf(-Float($0) / perNat) }

    // Both directions build the vector from its eight lanes at once: setting lanes one by one
    // stores each through memory and reloads the whole vector, a stall per lane.
    init(_ likelihoods: SIMD8<Float>) {
        codes = SIMD8(Self.code(likelihoods[0]), Self.code(likelihoods[1]), Self.code(likelihoods[2]), Self.code(likelihoods[3]),
                      Self.code(likelihoods[4]), Self.code(likelihoods[5]), Self.code(likelihoods[6]), Self.code(likelihoods[7]))
    }

    /// The likelihoods kept.
    var unpacked: SIMD8<Float> {
        Self.likelihoods.withUnsafeBufferPointer { table in
            SIMD8(table[Int(codes[0])], table[Int(codes[1])], table[Int(codes[2])], table[Int(codes[3])],
                  table[Int(codes[4])], table[Int(codes[5])], table[Int(codes[6])], table[Int(codes[7])])
        }
    }

    /// Sets one slot's likelihood.
    mutating func set(_ slot: Int, _ likelihood: Float) {
        codes[slot] = Self.code(likelihood)
    }

    private static func code(_ likelihood: Float) -> UInt8 {
        guard likelihood > 0 else { return 255 }
        guard likelihood < 1 else { return 0 }
        return UInt8(min(254, (-logf(likelihood) * perNat).rounded()))
    }
}
