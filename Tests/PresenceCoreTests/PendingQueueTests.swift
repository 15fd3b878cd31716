import Testing
@testable import PresenceCore

@Suite struct PendingQueueTests {
    /// An entry whose slot is its arrival number.
    private func entry(_ time: Int64, _ arrival: Int32) -> Pending {
        Pending(time: time, slot: arrival)
    }

    @Test func takesWhatIsDueInTimeThenArrivalOrderAndKeepsTheRest() {
        var random = RandomSource(seed: 3)
        var queue = PendingQueue()
        var shadow: [Pending] = []
        var due: [Pending] = []
        var bound: Int64 = 0
        for arrival in 1 ... 5_000 as ClosedRange<Int32> {
            let value = entry(Int64(random.next() % 400) + bound - 100, arrival)
            queue.insert(value)
            shadow.append(value)
            if arrival % 50 == 0 {
                bound += 20
                queue.takeDue(upTo: bound, into: &due)
                let expected = shadow.filter { $0.time <= bound }.sorted { ($0.time, $0.slot) < ($1.time, $1.slot) }
                shadow.removeAll { $0.time <= bound }
                #expect(due.map(\.slot) == expected.map(\.slot))
                #expect(queue.earliest == shadow.map(\.time).min())
            }
        }
        queue.takeDue(upTo: .max, into: &due)
        #expect(due.count == shadow.count && queue.isEmpty && queue.earliest == nil)
    }

    @Test func nothingDueLeavesTheQueueAsItWas() {
        var queue = PendingQueue([entry(50, 1), entry(40, 2)])
        var due = [entry(1, 9)]
        queue.takeDue(upTo: 39, into: &due)
        #expect(due.isEmpty && queue.unordered.count == 2 && queue.earliest == 40)
        queue.takeDue(upTo: Int64.min, into: &due)
        #expect(due.isEmpty)
        queue.takeDue(upTo: 45, into: &due)
        #expect(due.map(\.slot) == [2] && queue.earliest == 50)
    }
}
