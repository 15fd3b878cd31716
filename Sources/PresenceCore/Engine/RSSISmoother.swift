#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How a (device, node) stream of RSSI readings is smoothed. Readings arrive at irregular times
/// (advertising jitter, packet loss), so every method weighs them by the time between them.
public enum SmoothingMethod: String, Sendable, Equatable, CaseIterable {
    /// An exponential average with a time constant; each reading's pull is clamped.
    case exponential
    /// A one-dimensional Kalman filter: the true level drifts as a random walk, readings are
    /// noisy; readings far outside the expected spread count for less (a Huber-style gate).
    case kalman
    /// The median of the readings within a time window.
    case median
}

/// The smoother's figures (milliseconds, dB, dB²).
public struct SmoothingSettings: Sendable, Equatable {
    public var method: SmoothingMethod = .kalman
    /// Exponential: the time constant. Median: the window is twice this.
    public var timeConstant: Int64 = 1_500
    /// Exponential: the most one reading may move the estimate.
    public var clamp: Double = 15
    /// Kalman: how fast the true level may drift, dB² per second.
    public var processNoise: Double = 4
    /// Kalman: the variance of one reading around the true level.
    public var measurementNoise: Double = 25
    /// Kalman: readings beyond this many standard deviations of the expected spread are down-weighted.
    public var gate: Double = 2.5

    public init() {}
}

/// The smoothed RSSI of one (device, node) stream, with how sure it is, and a quick average of
/// the same readings beside it.
public struct RSSISmoother: Sendable, Equatable {
    /// The estimate, dBm.
    public private(set) var value: Double
    /// An exponential average with a time constant of `quickTimeConstant`, whatever the method,
    /// dBm: it crosses when a person passes, a second or two before `value` does, and only dates
    /// what `value` decides.
    public private(set) var quick: Double
    /// The time constant of `quick`, ms: the lag of the 2 s window mean that plain
    /// strongest-RSSI decides on.
    public static let quickTimeConstant = 1_000.0
    /// Its variance, dB² (Kalman); for the other methods, the measurement noise.
    public private(set) var variance: Double
    public private(set) var lastTime: Int64
    private var window: [Reading] = []

    private struct Reading: Sendable, Equatable {
        var time: Int64
        var rssi: Double
    }

    /// Starts from a first reading.
    public init(rssi: Double, at time: Int64, settings: SmoothingSettings) {
        value = rssi
        quick = rssi
        variance = settings.measurementNoise
        lastTime = time
        if settings.method == .median { window = [Reading(time: time, rssi: rssi)] }
    }

    /// Adds a reading taken at `time` (not before the last one).
    public mutating func update(rssi: Double, at time: Int64, settings: SmoothingSettings) {
        let elapsed = Double(max(0, time - lastTime))
        quick += elapsed / (Self.quickTimeConstant + elapsed) * (rssi - quick)
        switch settings.method {
        case .exponential:
            let weight = settings.timeConstant <= 0 ? 1 : 1 - exp(-elapsed / Double(settings.timeConstant))
            value += weight * min(max(rssi - value, -settings.clamp), settings.clamp)
        case .kalman:
            variance += settings.processNoise * elapsed / 1000
            let innovation = rssi - value
            var noise = settings.measurementNoise
            let spread = (variance + noise).squareRoot() * settings.gate
            if abs(innovation) > spread {
                noise *= (innovation / spread) * (innovation / spread)
            }
            let gain = variance / (variance + noise)
            value += gain * innovation
            variance *= 1 - gain
        case .median:
            window.append(Reading(time: time, rssi: rssi))
            let horizon = time - 2 * settings.timeConstant
            if let first = window.firstIndex(where: { $0.time >= horizon }), first > 0 {
                window.removeFirst(first)
            }
            value = window.map(\.rssi).median() ?? value
        }
        lastTime = max(lastTime, time)
    }
}
