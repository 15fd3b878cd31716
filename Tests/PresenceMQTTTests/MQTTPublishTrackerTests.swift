@testable import PresenceMQTT
import Testing

/// The completion bookkeeping behind `MQTTClient.publish`, driven with strings as waiters: the
/// orderings that a live broker produces only rarely.
@Suite struct MQTTPublishTrackerTests {
    typealias Tracker = PublishTracker<String, String>

    /// The reason code if registering found the acknowledgement already there, else nil.
    private func register(_ tracker: inout Tracker, mid: Int32, _ waiter: String) -> Int32? {
        if case .acknowledged(let reason, _) = tracker.register(mid: mid, waiter) { return reason }
        return nil
    }

    /// Takes `count` window slots; true if all were free.
    private func acquire(_ tracker: inout Tracker, _ count: Int) -> Bool {
        (0..<count).allSatisfy { _ in tracker.tryAcquire() }
    }

    @Test func anAcknowledgementBeforeRegistrationIsKeptForItsPublisher() {
        var tracker = Tracker(limit: 5)
        #expect(acquire(&tracker, 1))
        let early = tracker.completed(mid: 7, reason: 0x10)
        #expect(early.waiter == nil && early.handoff == nil)
        #expect(register(&tracker, mid: 7, "a") == 0x10)
        #expect(tracker.inFlight == 0)
    }

    @Test func aQoS0CompletionNeverFinishesAQoS1WaiterWithTheSameID() {
        var tracker = Tracker(limit: 5)
        // Written before its publisher registered it, then registered: consumed.
        #expect(tracker.completed(mid: 5, reason: 0).waiter == nil)
        tracker.registerUnwaited(mid: 5, qos: 0, epoch: tracker.epoch)
        // Registered, then written: swallowed.
        tracker.registerUnwaited(mid: 6, qos: 0, epoch: tracker.epoch)
        #expect(tracker.completed(mid: 6, reason: 0).waiter == nil)

        // Later QoS 1 messages get the same ids; they must wait for their own acknowledgements.
        #expect(acquire(&tracker, 2))
        #expect(register(&tracker, mid: 5, "five") == nil)
        #expect(register(&tracker, mid: 6, "six") == nil)
        let six = tracker.completed(mid: 6, reason: 0)
        let five = tracker.completed(mid: 5, reason: 0)
        #expect(six.waiter == "six")
        #expect(five.waiter == "five")
    }

    @Test func unwrittenQoS0MessagesAreForgottenWhenTheConnectionEnds() {
        var tracker = Tracker(limit: 5)
        let before = tracker.epoch
        tracker.registerUnwaited(mid: 9, qos: 0, epoch: before)
        tracker.connectionEnded()
        // Queued before the connection ended, registered after: not recorded either.
        tracker.registerUnwaited(mid: 10, qos: 0, epoch: before)

        // QoS 1 messages reuse ids 9 and 10 and are acknowledged before their publishers register.
        #expect(acquire(&tracker, 2))
        #expect(tracker.completed(mid: 9, reason: 0).waiter == nil)
        #expect(tracker.completed(mid: 10, reason: 0).waiter == nil)
        #expect(register(&tracker, mid: 9, "nine") == 0)
        #expect(register(&tracker, mid: 10, "ten") == 0)
        #expect(tracker.inFlight == 0)
    }

    @Test func theBirthMessagesAcknowledgementReachesNobodyEvenAfterAReconnect() {
        var tracker = Tracker(limit: 1)
        tracker.registerUnwaited(mid: 3, qos: 1, epoch: tracker.epoch)
        tracker.connectionEnded()
        let completion = tracker.completed(mid: 3, reason: 0)
        #expect(completion.waiter == nil && completion.handoff == nil)
        // Nothing was left behind for a later message with the same id.
        #expect(acquire(&tracker, 1))
        #expect(register(&tracker, mid: 3, "later") == nil)
    }

    @Test func freedSlotsGoToQueuedPublishersInArrivalOrder() {
        var tracker = Tracker(limit: 2)
        #expect(acquire(&tracker, 2))
        #expect(!acquire(&tracker, 1))
        tracker.enqueue(id: 1, "first")
        tracker.enqueue(id: 2, "second")
        tracker.enqueue(id: 3, "third")
        let cancelled = tracker.cancelSlotWait(id: 2)
        let cancelledAgain = tracker.cancelSlotWait(id: 2)
        #expect(cancelled == "second" && cancelledAgain == nil)

        _ = tracker.register(mid: 100, "a")
        _ = tracker.register(mid: 101, "b")
        let a = tracker.completed(mid: 100, reason: 0)
        let b = tracker.completed(mid: 101, reason: 0)
        #expect(a.waiter == "a" && a.handoff == "first")
        #expect(b.waiter == "b" && b.handoff == "third")
        #expect(tracker.inFlight == 2)
        let handoff = tracker.releaseSlot()
        #expect(handoff == nil)
        #expect(tracker.inFlight == 1)
        #expect(tracker.peakInFlight == 2)
    }

    @Test func aFullWindowIsRefilledOnlyOnceHalfOfItIsFree() {
        var tracker = Tracker(limit: 6)
        #expect(acquire(&tracker, 6))
        tracker.enqueue(id: 1, "publisher")
        for mid in Int32(0) ..< 6 { _ = tracker.register(mid: mid, "m\(mid)") }
        // Acknowledgements free slots without waking the publisher until three are in flight...
        let first = tracker.completed(mid: 0, reason: 0)
        let second = tracker.completed(mid: 1, reason: 0)
        let jumped = tracker.tryAcquire()
        #expect(first.handoff == nil && second.handoff == nil)
        #expect(!jumped, "nobody jumps in while the window drains")
        #expect(tracker.inFlight == 4)
        // ... then the next one goes to the publisher, which fills the window again at once.
        let third = tracker.completed(mid: 2, reason: 0)
        #expect(third.handoff == "publisher")
        #expect(tracker.inFlight == 4)
        #expect(acquire(&tracker, 2))
        let past = tracker.tryAcquire()
        #expect(!past)
        #expect(tracker.inFlight == 6 && tracker.peakInFlight == 6)
        // Below the limit, a slot is free at once.
        var light = Tracker(limit: 6)
        #expect(acquire(&light, 5))
        let released = light.releaseSlot()
        let again = light.tryAcquire()
        #expect(released == nil && again && light.inFlight == 5)
    }

    @Test func aCancelledPublisherKeepsItsSlotUntilTheAcknowledgement() {
        var tracker = Tracker(limit: 1)
        #expect(acquire(&tracker, 1))
        _ = tracker.register(mid: 1, "a")
        let cancelled = tracker.cancelAck(mid: 1)
        let cancelledAgain = tracker.cancelAck(mid: 1)
        #expect(cancelled == "a" && cancelledAgain == nil)
        #expect(!acquire(&tracker, 1))
        #expect(tracker.completed(mid: 1, reason: 0).waiter == nil)
        #expect(acquire(&tracker, 1))
    }

    @Test func drainingReturnsEveryWaiter() {
        var tracker = Tracker(limit: 1)
        #expect(acquire(&tracker, 1))
        _ = tracker.register(mid: 1, "ack")
        tracker.enqueue(id: 1, "slot")
        let drained = tracker.drain()
        #expect(drained.acks == ["ack"])
        #expect(drained.slots == ["slot"])
        #expect(tracker.inFlight == 0)
    }
}
