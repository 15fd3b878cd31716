extension Array where Element == Double {
    /// The median (the mean of the two middle values for an even count), or nil when empty.
    func median() -> Double? {
        guard !isEmpty else { return nil }
        let sorted = self.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// The value below which `share` (0 to 1) of the elements lie, interpolated linearly between
    /// the two nearest ranks (the median at 0.5), or nil when empty.
    func quantile(_ share: Double) -> Double? {
        guard !isEmpty else { return nil }
        let sorted = self.sorted()
        let rank = Swift.min(Swift.max(share, 0), 1) * Double(sorted.count - 1)
        let lower = Int(rank.rounded(.down))
        let upper = Swift.min(lower + 1, sorted.count - 1)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (rank - Double(lower))
    }
}

extension Array where Element == Double {
    /// The median of readings taken in steps of `step` (RSSI comes in whole dB): each reading
    /// stands for the step around it, spread evenly, and the median is the point below which
    /// half of them lie. Unlike `median()`, which jumps from step to step, it moves with the
    /// share of readings on either side of the middle step. Nil when empty.
    func steppedMedian(step: Double = 1) -> Double? {
        guard !isEmpty else { return nil }
        let sorted = self.sorted()
        let middle = sorted[sorted.count / 2]
        let below = sorted.prefix { $0 < middle - step / 2 }.count
        let within = sorted.dropFirst(below).prefix { $0 < middle + step / 2 }.count
        return middle - step / 2 + step * (Double(sorted.count) / 2 - Double(below)) / Double(within)
    }
}
