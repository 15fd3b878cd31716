/// Estimates how far a node's clock is off, from its batches: the smallest recent differences
/// between a batch's arrival and its `sent` time are the clock offset plus the quickest delivery,
/// which is small on a working network. Beyond a threshold the node's timestamps are corrected by
/// it, so that a node whose clock is minutes off still takes part in the same moments as the rest.
/// The third smallest of the last 20 is taken (the smallest until there are three), so that one or
/// two batches with a wrong `sent` cannot move the estimate.
public struct NodeClock: Sendable, Equatable {
    /// Differences arrival − sent of the last batches, ms.
    private var recent: [Int64] = []
    private var next = 0
    /// When the node's last batch arrived, ms; nil before any.
    public private(set) var lastArrival: Int64?
    public static let window = 20

    public init() {}

    /// Takes one batch's arrival and sent times.
    public mutating func observe(sent: Int64, arrival: Int64) {
        lastArrival = max(lastArrival ?? arrival, arrival)
        let difference = TimeBounds.difference(arrival, sent)
        if recent.count < Self.window {
            recent.append(difference)
        } else {
            recent[next] = difference
            next = (next + 1) % Self.window
        }
    }

    /// The estimated offset (add it to the node's time to get ours), ms; nil before any batch.
    public var offset: Int64? {
        guard !recent.isEmpty else { return nil }
        // The three smallest in one pass: this runs for every batch, so nothing is sorted or allocated.
        var smallest = (Int64.max, Int64.max, Int64.max)
        for difference in recent {
            if difference < smallest.0 {
                smallest = (difference, smallest.0, smallest.1)
            } else if difference < smallest.1 {
                smallest = (smallest.0, difference, smallest.1)
            } else if difference < smallest.2 {
                smallest.2 = difference
            }
        }
        return recent.count < 3 ? smallest.0 : smallest.2
    }

    /// The correction to apply to the node's timestamps: the offset when it exceeds `threshold`
    /// either way, else 0 (ordinary delivery delays are not corrected).
    public func correction(threshold: Int64) -> Int64 {
        guard let offset, abs(offset) > threshold else { return 0 }
        return offset
    }
}
