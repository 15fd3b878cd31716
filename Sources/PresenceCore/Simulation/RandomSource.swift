#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A small, fast, seedable random generator (SplitMix64), so that a simulation with the same seed
/// gives the same world on every machine.
public struct RandomSource: RandomNumberGenerator, Sendable {
    private var state: UInt64
    private var spareGaussian: Double?

    public init(seed: UInt64) {
        state = seed
    }

    /// A generator whose stream depends on `seed` and on every string in `labels`.
    public init(seed: UInt64, labels: String...) {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ seed
        for label in labels {
            for byte in label.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            hash = (hash ^ 0xFF) &* 0x0000_0100_0000_01B3
        }
        state = hash
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func uniform() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// Standard normal (Box-Muller, both values used).
    public mutating func gaussian() -> Double {
        if let spare = spareGaussian {
            spareGaussian = nil
            return spare
        }
        var u = uniform()
        while u <= .ulpOfOne { u = uniform() }
        let v = uniform()
        let radius = (-2 * log(u)).squareRoot()
        spareGaussian = radius * sin(2 * .pi * v)
        return radius * cos(2 * .pi * v)
    }
}
