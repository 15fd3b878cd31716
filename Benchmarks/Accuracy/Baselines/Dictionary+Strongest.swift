extension Dictionary where Key == String, Value == Double {
    /// The key with the largest value, `excluding` one key; ties go to the smaller key, so that
    /// every run decides the same.
    func strongest(excluding excluded: String? = nil) -> (beacon: String, value: Double)? {
        var best: (beacon: String, value: Double)?
        for (beacon, value) in self where beacon != excluded {
            if let current = best, current.value > value || (current.value == value && current.beacon < beacon) { continue }
            best = (beacon, value)
        }
        return best
    }
}
