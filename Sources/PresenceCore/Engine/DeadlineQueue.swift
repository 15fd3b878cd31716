/// When each track next needs a look: at most one entry per track slot, keyed by its deadline, in
/// a binary heap that knows where each slot sits, so that a deadline moves up or down in place.
/// The engine asks for the earliest deadline in O(1) and takes the due tracks in O(log n) each,
/// instead of scanning every track at every tick. Ties go to the smaller slot.
struct DeadlineQueue: Sendable {
    private var heap: [Int32] = []
    /// Each slot's place in `heap`, -1 when it has no entry.
    private var position: [Int32] = []
    /// Each slot's deadline, while it has an entry.
    private var keys: [Int64] = []

    init() {}

    /// The earliest deadline and its slot.
    var min: (slot: Int, deadline: Int64)? {
        heap.first.map { (Int($0), keys[Int($0)]) }
    }

    /// The deadline of `slot`, if it has one.
    func deadline(of slot: Int) -> Int64? {
        slot < position.count && position[slot] >= 0 ? keys[slot] : nil
    }

    /// Gives `slot` the deadline `deadline`, adding it or moving it.
    mutating func set(_ slot: Int, _ deadline: Int64) {
        if slot >= position.count {
            position.append(contentsOf: repeatElement(-1, count: slot + 1 - position.count))
            keys.append(contentsOf: repeatElement(0, count: slot + 1 - keys.count))
        }
        let place = Int(position[slot])
        if place < 0 {
            keys[slot] = deadline
            heap.append(Int32(slot))
            position[slot] = Int32(heap.count - 1)
            siftUp(heap.count - 1)
        } else if deadline != keys[slot] {
            let earlier = deadline < keys[slot]
            keys[slot] = deadline
            if earlier { siftUp(place) } else { siftDown(place) }
        }
    }

    /// Removes the entry of `slot`, if any.
    mutating func remove(_ slot: Int) {
        guard slot < position.count, position[slot] >= 0 else { return }
        let place = Int(position[slot])
        position[slot] = -1
        let last = heap.removeLast()
        guard place < heap.count else { return }
        heap[place] = last
        position[Int(last)] = Int32(place)
        siftUp(place)
        siftDown(Int(position[Int(last)]))
    }

    // The sifts walk the heap through buffers: through the arrays' subscripts every step checked
    // bounds and each array's uniqueness, a quarter of a sift's instructions (callgrind).

    private mutating func siftUp(_ start: Int) {
        withBuffers { heap, position, keys in
            var child = start
            let moving = heap[child]
            while child > 0 {
                let parent = (child - 1) / 2
                guard Self.less(moving, heap[parent], keys) else { break }
                heap[child] = heap[parent]
                position[Int(heap[child])] = Int32(child)
                child = parent
            }
            heap[child] = moving
            position[Int(moving)] = Int32(child)
        }
    }

    private mutating func siftDown(_ start: Int) {
        withBuffers { heap, position, keys in
            var parent = start
            let moving = heap[parent]
            while true {
                var child = 2 * parent + 1
                guard child < heap.count else { break }
                if child + 1 < heap.count, Self.less(heap[child + 1], heap[child], keys) { child += 1 }
                guard Self.less(heap[child], moving, keys) else { break }
                heap[parent] = heap[child]
                position[Int(heap[parent])] = Int32(parent)
                parent = child
            }
            heap[parent] = moving
            position[Int(moving)] = Int32(parent)
        }
    }

    private static func less(_ a: Int32, _ b: Int32, _ keys: UnsafeBufferPointer<Int64>) -> Bool {
        let (ka, kb) = (keys[Int(a)], keys[Int(b)])
        return ka != kb ? ka < kb : a < b
    }

    /// The heap, the slots' places and their deadlines as buffers, for one sift.
    private mutating func withBuffers(_ body: (UnsafeMutableBufferPointer<Int32>, UnsafeMutableBufferPointer<Int32>, UnsafeBufferPointer<Int64>) -> Void) {
        heap.withUnsafeMutableBufferPointer { heap in
            position.withUnsafeMutableBufferPointer { position in
                keys.withUnsafeBufferPointer { keys in body(heap, position, keys) }
            }
        }
    }
}
