#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Smooths one (device, node) stream of RSSI readings that arrive at irregular times: an
/// exponential average whose weight follows the time since the last reading, with each reading's
/// pull limited so that one absurd value cannot drag the estimate far.
public struct RSSISmoother: Sendable, Equatable {
    public private(set) var value: Double
    public private(set) var lastTime: Int64
    public private(set) var count: Int

    /// Starts from a first reading.
    public init(rssi: Double, at time: Int64) {
        value = rssi
        lastTime = time
        count = 1
    }

    /// Adds a reading taken at `time` (not before the last one).
    public mutating func update(rssi: Double, at time: Int64, timeConstant: Int64, clamp: Double) {
        let elapsed = Double(max(0, time - lastTime))
        let weight = timeConstant <= 0 ? 1 : 1 - exp(-elapsed / Double(timeConstant))
        let pull = min(max(rssi - value, -clamp), clamp)
        value += weight * pull
        lastTime = max(lastTime, time)
        count += 1
    }
}
