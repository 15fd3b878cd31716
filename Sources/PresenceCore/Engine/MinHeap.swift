/// A binary min-heap: the engine's queue of observations waiting for their time. Cheaper than a
/// min-max heap for a queue that only ever takes its smallest element (one comparison per level
/// going down, elements moved into a hole rather than swapped).
struct MinHeap<Element: Comparable & Sendable>: Sendable {
    private(set) var unordered: [Element] = []

    init() {}

    /// A heap of `elements`, in linear time.
    init(_ elements: [Element]) {
        unordered = elements
        var index = unordered.count / 2
        while index > 0 {
            index -= 1
            siftDown(from: index)
        }
    }

    var min: Element? { unordered.first }

    var isEmpty: Bool { unordered.isEmpty }

    mutating func insert(_ element: Element) {
        unordered.append(element)
        unordered.withUnsafeMutableBufferPointer { heap in
            var hole = heap.count - 1
            while hole > 0 {
                let parent = (hole - 1) / 2
                guard element < heap[parent] else { break }
                heap[hole] = heap[parent]
                hole = parent
            }
            heap[hole] = element
        }
    }

    @discardableResult
    mutating func removeMin() -> Element? {
        guard let last = unordered.popLast() else { return nil }
        guard !unordered.isEmpty else { return last }
        let first = unordered[0]
        unordered[0] = last
        siftDown(from: 0)
        return first
    }

    private mutating func siftDown(from start: Int) {
        unordered.withUnsafeMutableBufferPointer { heap in
            let element = heap[start]
            var hole = start
            while true {
                var child = 2 * hole + 1
                guard child < heap.count else { break }
                if child + 1 < heap.count, heap[child + 1] < heap[child] { child += 1 }
                guard heap[child] < element else { break }
                heap[hole] = heap[child]
                hole = child
            }
            heap[hole] = element
        }
    }
}
