#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Slowly varying shadowing, dB: an Ornstein-Uhlenbeck process, correlated in time over the
/// time constant it is stepped with and stationary with its sigma. The caller owns the random
/// stream, so that a link can draw its fading and losses from the same one.
struct Shadowing: Sendable {
    private(set) var value: Double
    private var lastTime: Int64

    /// Starts from a draw of the stationary distribution at `time`.
    init(sigma: Double, at time: Int64, random: inout RandomSource) {
        value = random.gaussian() * sigma
        lastTime = time
    }

    /// Steps the process to `time` (ms) and returns its value.
    mutating func advance(to time: Int64, sigma: Double, constant: Int64, random: inout RandomSource) -> Double {
        let elapsed = Double(max(0, time - lastTime))
        let rho = constant > 0 ? exp(-elapsed / Double(constant)) : 0
        value = value * rho + sigma * (1 - rho * rho).squareRoot() * random.gaussian()
        lastTime = time
        return value
    }
}
