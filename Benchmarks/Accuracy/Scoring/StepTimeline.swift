/// A value that changes at given moments: `initial` before the first change, then each change's
/// value until the next. Changes are set in time order; two at the same moment keep the last, and
/// a change back to the value before it within the same moment leaves nothing behind.
struct StepTimeline<Value: Equatable & Sendable>: Sendable {
    /// From `time` on, the value is `value`.
    struct Change: Sendable {
        var time: Int64
        var value: Value
    }

    /// A stretch of constant value, `start` included, `end` excluded.
    struct Segment: Sendable {
        var start: Int64
        var end: Int64
        var value: Value
    }

    let initial: Value
    private(set) var changes: [Change] = []

    init(initial: Value) {
        self.initial = initial
    }

    /// The value after the last change.
    var last: Value { changes.last?.value ?? initial }

    /// Sets `value` from `time` on. A time before the last change counts as that change's time,
    /// so the timeline never goes back.
    mutating func set(_ value: Value, at time: Int64) {
        if let latest = changes.last, time <= latest.time {
            changes.removeLast()
            if value != last { changes.append(Change(time: latest.time, value: value)) }
            return
        }
        if value != last { changes.append(Change(time: time, value: value)) }
    }

    /// The value at `time`.
    func value(at time: Int64) -> Value {
        var low = 0
        var high = changes.count
        while low < high {
            let middle = (low + high) / 2
            if changes[middle].time <= time { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? initial : changes[low - 1].value
    }

    /// The stretches of constant value covering `start ..< end`, clipped to it, in order.
    func segments(from start: Int64, to end: Int64) -> [Segment] {
        guard start < end else { return [] }
        var segments: [Segment] = []
        var current = Segment(start: start, end: end, value: value(at: start))
        for change in changes where change.time > start && change.time < end {
            current.end = change.time
            segments.append(current)
            current = Segment(start: change.time, end: end, value: change.value)
        }
        segments.append(current)
        return segments
    }
}
