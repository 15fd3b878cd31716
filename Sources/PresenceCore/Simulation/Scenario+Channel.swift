#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The per-packet arithmetic of the radio model, kept apart from the simulator's bookkeeping.

extension Scenario.Radio {
    /// The share of packets lost whose expected RSSI (everything but the per-packet fade) is
    /// `expected` dBm: `packetLoss`, and on top of it the loss near the floor when
    /// `lossFadeWidth` is set.
    func lossShare(expected: Double) -> Double {
        guard lossFadeWidth > 0 else { return packetLoss }
        let nearFloor = 1 / (1 + exp((expected - sensitivity) / lossFadeWidth))
        return packetLoss + (1 - packetLoss) * nearFloor
    }

    /// One packet's fast fade, dB, drawn from the link's stream.
    func fade(_ random: inout RandomSource) -> Double {
        switch fading {
        case .gaussian:
            return random.gaussian() * fadingSigma
        case .rayleigh:
            // |h|² of a unit-power Rayleigh amplitude is exponential with mean 1.
            var u = random.uniform()
            while u <= .ulpOfOne { u = random.uniform() }
            return 10 * log10(-log(u))
        }
    }

    /// A receiver's fixed gain error, dB, from its own stream: gaussian with `nodeGainSigma`,
    /// plus uniform in ±`nodeGainSpread`.
    func gain(of node: String, seed: UInt64) -> Double {
        var random = RandomSource(seed: seed, labels: "gain", node)
        let gain = random.gaussian() * nodeGainSigma
        guard nodeGainSpread > 0 else { return gain }
        return gain + (2 * random.uniform() - 1) * nodeGainSpread
    }
}
