extension Array where Element == Double {
    /// The median (the mean of the two middle values for an even count), or nil when empty.
    func median() -> Double? {
        guard !isEmpty else { return nil }
        let sorted = self.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
