extension Array where Element == Double {
    /// The median (the mean of the two middle values for an even count), or nil when empty.
    /// Found by selection, not by sorting: the self-calibration takes one for each of thousands
    /// of links of 300 readings every minute, and sorting them was a third of the fit.
    func median() -> Double? {
        guard !isEmpty else { return nil }
        var values = self
        let middle = values.count / 2
        return values.withUnsafeMutableBufferPointer { values in
            let upper = values.select(middle)
            guard values.count % 2 == 0 else { return upper }
            // Everything before `middle` is no greater than `upper`: the lower middle is their largest.
            var lower = values[0]
            for index in 1 ..< middle where values[index] > lower { lower = values[index] }
            return (lower + upper) / 2
        }
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

extension UnsafeMutableBufferPointer where Element == Double {
    /// The `k`-th smallest element (from 0), found by quickselect (Hoare's partition around the
    /// median of three): the elements are rearranged so that none before `k` is greater and none
    /// after it is smaller. `k` must be an index of the buffer.
    func select(_ k: Int) -> Double {
        var low = 0
        var high = count - 1
        while low < high {
            let mid = low + (high - low) / 2
            if self[mid] < self[low] { swapAt(mid, low) }
            if self[high] < self[low] { swapAt(high, low) }
            if self[high] < self[mid] { swapAt(high, mid) }
            let pivot = self[mid]
            var i = low
            var j = high
            while i <= j {
                while self[i] < pivot { i += 1 }
                while pivot < self[j] { j -= 1 }
                if i <= j {
                    swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if k <= j {
                high = j
            } else if k >= i {
                low = i
            } else {
                return self[k]
            }
        }
        return self[k]
    }
}
