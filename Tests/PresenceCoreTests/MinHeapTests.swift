import Testing
@testable import PresenceCore

@Suite struct MinHeapTests {
    @Test func givesBackWhatWentInSmallestFirst() {
        var random = RandomSource(seed: 3)
        var heap = MinHeap<Int>()
        var inserted: [Int] = []
        var taken: [Int] = []
        for round in 0 ..< 2_000 {
            let value = Int(random.next() % 500)
            heap.insert(value)
            inserted.append(value)
            if round % 3 == 0, let smallest = heap.removeMin() {
                taken.append(smallest)
            }
        }
        while let smallest = heap.removeMin() { taken.append(smallest) }
        #expect(taken.sorted() == inserted.sorted(), "every element comes out once")
        #expect(heap.isEmpty && heap.min == nil)
    }

    @Test func eachRemovalIsTheSmallestLeft() {
        var random = RandomSource(seed: 5)
        var heap = MinHeap<Int>()
        var shadow: [Int] = []
        for _ in 0 ..< 1_000 {
            if random.next() % 3 == 0, !shadow.isEmpty {
                let smallest = shadow.min()
                #expect(heap.min == smallest)
                #expect(heap.removeMin() == smallest)
                shadow.remove(at: shadow.firstIndex(of: smallest ?? 0) ?? 0)
            } else {
                let value = Int(random.next() % 100)
                heap.insert(value)
                shadow.append(value)
            }
        }
    }

    @Test func anArrayBecomesAHeap() {
        var heap = MinHeap([9, 4, 7, 1, 8, 2, 2, 6, 3, 5, 0])
        var out: [Int] = []
        while let smallest = heap.removeMin() { out.append(smallest) }
        #expect(out == [0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9])
    }
}
