/// Estimates each node's receive offset from live traffic alone, for venues whose nodes have no
/// coordinates or cannot advertise. Nodes differ by several dB (antenna, case, mounting). It is
/// fed the readings a node takes of people the engine places at that node's own beacon: people
/// stand about as close to one booth as to another, so the median path loss of those readings
/// differs between nodes mostly by each node's gain. A node's offset is how far its median lies
/// from the median node's: adding it to the node's RSSI evens the nodes out.
///
/// Readings of people anywhere else must not be fed: a node that nobody approaches would read
/// as weak. Bounded memory (a 1 dB histogram per node), pure and deterministic: the same
/// readings give the same offsets in any process. Offsets are clamped to ±`limit` and given
/// only once a node has `minimumSamples` readings.
public struct NodeOffsetEstimator: Sendable {
    /// The estimate for one node.
    public struct Estimate: Sendable, Equatable {
        /// dB to add to the node's RSSI.
        public var offset: Double
        /// Readings it rests on.
        public var samples: Int
    }

    /// The quantile of a node's path losses compared between nodes (the median).
    public var quantile = 0.5
    /// Readings a node needs before it gets an offset, and before it counts in the reference.
    public var minimumSamples = 100
    /// The largest offset given, dB.
    public var limit = 10.0

    private static let lowest = -20.0
    private static let binCount = 180
    private var histograms: [String: [UInt32]] = [:]
    private var counts: [String: Int] = [:]

    public init() {}

    /// Takes one reading of `node`: its path loss (tx − RSSI), dB.
    public mutating func add(node: String, pathLoss: Double) {
        guard pathLoss.isFinite else { return }
        let bin = Int(min(max((pathLoss - Self.lowest).rounded(.down), 0), Double(Self.binCount - 1)))
        histograms[node, default: [UInt32](repeating: 0, count: Self.binCount)][bin] &+= 1
        counts[node, default: 0] += 1
    }

    /// The offset of every node with enough readings, by node key (nodes with too few are left
    /// out: their offset is 0). Empty until two nodes have enough readings.
    public func estimates() -> [String: Estimate] {
        var quantiles: [(node: String, value: Double)] = []
        for (node, histogram) in histograms where (counts[node] ?? 0) >= minimumSamples {
            quantiles.append((node, Self.quantile(histogram, count: counts[node] ?? 0, share: quantile)))
        }
        guard quantiles.count >= 2, let reference = quantiles.map(\.value).median() else { return [:] }
        var estimates: [String: Estimate] = [:]
        for (node, value) in quantiles {
            estimates[node] = Estimate(offset: min(max(value - reference, -limit), limit), samples: counts[node] ?? 0)
        }
        return estimates
    }

    /// The path loss below which `share` of the readings lie, interpolated within its 1 dB bin.
    private static func quantile(_ histogram: [UInt32], count: Int, share: Double) -> Double {
        let target = share * Double(count)
        var below = 0.0
        for (bin, value) in histogram.enumerated() where value > 0 {
            let next = below + Double(value)
            if next >= target {
                return lowest + Double(bin) + (target - below) / Double(value)
            }
            below = next
        }
        return lowest + Double(binCount)
    }
}
