import Synchronization

/// How many bytes of received messages wait unread in a client's inbox, against a limit: the
/// network thread reserves room before queueing a message (or drops it), the reader gives the room
/// back as it takes each message. A message costs its `queuedSize`.
final class InboxGauge: Sendable {
    let limit: Int
    private let bytes = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Takes room for `cost` bytes; false (nothing taken) when the inbox is too full.
    func reserve(_ cost: Int) -> Bool {
        var current = bytes.load(ordering: .relaxed)
        while true {
            guard current + cost <= limit else { return false }
            let (exchanged, original) = bytes.compareExchange(expected: current, desired: current + cost, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Gives back the room of a message that was read.
    func release(_ cost: Int) {
        bytes.subtract(cost, ordering: .relaxed)
    }

    /// The bytes waiting now.
    var waiting: Int {
        bytes.load(ordering: .relaxed)
    }
}
