/// Matches libmosquitto's publish completions to the callers waiting for them, and keeps the
/// QoS 1/2 in-flight window. A value type driven by events; the client applies it under a lock and
/// resumes the waiters (continuations) it returns after unlocking. Generic over the waiters so that
/// tests can drive it with plain values.
///
/// libmosquitto reports completions by 16-bit message id only, for QoS 0 (written) and QoS 1/2
/// (acknowledged) alike, and may report one before `mosquitto_publish` has returned its id. So every
/// id the client gets back is registered here, even when nobody waits for it, and a completion for
/// an id not registered yet is kept in `early` until its publisher registers it.
struct PublishTracker<AckWaiter, SlotWaiter> {
    enum Entry {
        /// A `publish` caller waiting for its acknowledgement; holds a window slot.
        case waiting(AckWaiter)
        /// Its caller was cancelled; the slot is freed when the acknowledgement comes.
        case abandoned
        /// A QoS 1/2 message outside the window (the birth message): its completion is swallowed.
        case unwindowed
        /// A QoS 0 message queued during connection `epoch`: swallowed when written, forgotten when
        /// the connection ends (libmosquitto discards unwritten QoS 0 packets without a callback).
        case written(epoch: Int)
    }

    /// What registering an id found.
    enum Registration {
        case waiting
        case acknowledged(reason: Int32, handoff: SlotWaiter?)
    }

    let limit: Int
    /// Once a publisher has filled the window, queued publishers get a slot again only when it has
    /// drained to this (half the limit): a publisher that keeps it full is woken once per half a
    /// window instead of once per acknowledgement, each wake-up a hop between threads.
    let refillAt: Int
    private var refilling = false
    private(set) var inFlight = 0
    private(set) var peakInFlight = 0
    /// Counts connections; QoS 0 entries of an older epoch are stale.
    private(set) var epoch = 0
    private var entries: [Int32: Entry] = [:]
    private var early: [Int32: Int32] = [:]
    private var slotWaiters: [(id: UInt64, waiter: SlotWaiter)?] = []
    private var slotHead = 0

    init(limit: Int) {
        self.limit = limit
        refillAt = limit / 2
    }

    /// Takes a window slot if one is free (and the window is not waiting to drain after filling).
    mutating func tryAcquire() -> Bool {
        guard !refilling, inFlight < limit else { return false }
        inFlight += 1
        peakInFlight = max(peakInFlight, inFlight)
        if inFlight == limit { refilling = true }
        return true
    }

    /// Queues a caller for the next free slot, first come first served.
    mutating func enqueue(id: UInt64, _ waiter: SlotWaiter) {
        slotWaiters.append((id, waiter))
    }

    /// Removes a queued caller (it was cancelled); nil if it already got its slot.
    mutating func cancelSlotWait(id: UInt64) -> SlotWaiter? {
        guard let index = slotWaiters[slotHead...].firstIndex(where: { $0?.id == id }),
              let waiter = slotWaiters[index]?.waiter else { return nil }
        slotWaiters[index] = nil
        return waiter
    }

    /// Frees a slot, or hands it straight to the oldest queued caller (returned, to be resumed);
    /// after the window filled, only once it has drained to `refillAt`.
    mutating func releaseSlot() -> SlotWaiter? {
        if refilling {
            if inFlight > refillAt + 1 {
                inFlight -= 1
                return nil
            }
            refilling = false
        }
        while slotHead < slotWaiters.count {
            let next = slotWaiters[slotHead]
            slotHead += 1
            if slotHead > 64 && slotHead * 2 > slotWaiters.count {
                slotWaiters.removeFirst(slotHead)
                slotHead = 0
            }
            if let next { return next.waiter }
        }
        inFlight = max(0, inFlight - 1)
        return nil
    }

    /// A windowed publisher got `mid` back and waits for its acknowledgement.
    mutating func register(mid: Int32, _ waiter: AckWaiter) -> Registration {
        if let reason = early.removeValue(forKey: mid) {
            return .acknowledged(reason: reason, handoff: releaseSlot())
        }
        entries[mid] = .waiting(waiter)
        return .waiting
    }

    /// Records an id whose completion nobody waits for (QoS 0 queued in `epoch`, or the birth).
    mutating func registerUnwaited(mid: Int32, qos: Int, epoch queuedIn: Int) {
        if early.removeValue(forKey: mid) != nil { return }
        if qos > 0 {
            entries[mid] = .unwindowed
        } else if queuedIn == epoch {
            entries[mid] = .written(epoch: queuedIn)
        }
    }

    /// libmosquitto reported `mid` complete; returns the caller to resume and a slot handoff.
    mutating func completed(mid: Int32, reason: Int32) -> (waiter: AckWaiter?, handoff: SlotWaiter?) {
        switch entries.removeValue(forKey: mid) {
        case nil:
            early[mid] = reason
            return (nil, nil)
        case .waiting(let waiter):
            return (waiter, releaseSlot())
        case .abandoned:
            return (nil, releaseSlot())
        case .unwindowed, .written:
            return (nil, nil)
        }
    }

    /// The caller waiting for `mid` was cancelled; returns it if it was still waiting (and is one
    /// that `cancellable` accepts: the id may already belong to another message).
    mutating func cancelAck(mid: Int32, if cancellable: (AckWaiter) -> Bool = { _ in true }) -> AckWaiter? {
        guard case .waiting(let waiter) = entries[mid], cancellable(waiter) else { return nil }
        entries[mid] = .abandoned
        return waiter
    }

    /// The connection ended: unwritten QoS 0 packets are gone, QoS 1/2 ones stay queued.
    mutating func connectionEnded() {
        epoch += 1
        entries = entries.filter { if case .written = $0.value { false } else { true } }
    }

    /// Empties everything (the client stopped or its network thread ended) and returns every caller
    /// still waiting, to be failed.
    mutating func drain() -> (acks: [AckWaiter], slots: [SlotWaiter]) {
        let acks = entries.values.compactMap { if case .waiting(let waiter) = $0 { waiter } else { nil } }
        let slots = slotWaiters[slotHead...].compactMap { $0?.waiter }
        entries = [:]
        early = [:]
        slotWaiters = []
        slotHead = 0
        inFlight = 0
        refilling = false
        return (acks, slots)
    }
}
