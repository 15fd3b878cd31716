/// A user's current session as the engine sees it.
public struct Presence: Sendable, Equatable {
    public var user: String
    /// The device whose observations decided the enter.
    public var device: String
    public var beacon: String
    public var venue: String?
    public var entered: Int64
    /// The last qualifying sighting at the beacon.
    public var lastSeen: Int64
    /// The node that heard it, when known.
    public var lastNode: String?

    public init(user: String, device: String, beacon: String, venue: String?, entered: Int64, lastSeen: Int64, lastNode: String? = nil) {
        self.user = user
        self.device = device
        self.beacon = beacon
        self.venue = venue
        self.entered = entered
        self.lastSeen = lastSeen
        self.lastNode = lastNode
    }
}

/// An observation waiting for the engine to reach its time, kept small for sorting: the rest of
/// the observation waits in a slot. `PendingQueue` keeps entries in arrival order, so that ties
/// in time keep it without an arrival number.
struct Pending: Sendable {
    var time: Int64
    var slot: Int32
}

/// The observations waiting in `Pending` entries, in reusable slots; the time stays in the entry.
struct PendingObservations: Sendable {
    /// An observation without its time.
    private struct Waiting: Sendable {
        var link: ObservedLink
        var rssi: Double
        var tx: Double
        var txKnown: Bool
    }

    private var slots: [Waiting?] = []
    private var free: [Int32] = []

    /// Stores `observation` and returns its entry.
    mutating func store(_ observation: Observation) -> Pending {
        let waiting = Waiting(link: observation.link, rssi: observation.rssi, tx: observation.tx, txKnown: observation.txKnown)
        if let slot = free.popLast() {
            slots[Int(slot)] = waiting
            return Pending(time: observation.time, slot: slot)
        }
        slots.append(waiting)
        return Pending(time: observation.time, slot: Int32(slots.count - 1))
    }

    mutating func take(_ entry: Pending) -> Observation? {
        var waiting: Waiting?
        swap(&waiting, &slots[Int(entry.slot)])
        free.append(entry.slot)
        return waiting.map { Self.observation($0, at: entry.time) }
    }

    func peek(_ entry: Pending) -> Observation? {
        slots[Int(entry.slot)].map { Self.observation($0, at: entry.time) }
    }

    private static func observation(_ waiting: Waiting, at time: Int64) -> Observation {
        Observation(time: time, link: waiting.link, rssi: waiting.rssi, tx: waiting.tx, txKnown: waiting.txKnown)
    }
}

/// Which stream a reading belongs to, ordered for deterministic tie-breaks.
struct LinkKey: Comparable, Sendable {
    var device: String
    var node: String
    var beacon: String

    static func < (lhs: LinkKey, rhs: LinkKey) -> Bool {
        (lhs.device, lhs.node, lhs.beacon) < (rhs.device, rhs.node, rhs.beacon)
    }
}

/// One (device, node, beacon) stream: its smoothed RSSI and what the observations said with it.
/// Every decision reads the beacon and radius of every reading: they are read from the link's
/// site, one of a description per node that stays in the cache, so the stream keeps no copy.
struct Link: Sendable {
    /// What the registry says of the stream, as the latest observation carried it.
    var observed: ObservedLink
    var smoother: RSSISmoother
    var tx: Double
    var txKnown: Bool
    /// The path losses heard in the `hmm` decision's open step, summed, and how many.
    var stepLoss: Float = 0
    var stepReadings: Int32 = 0
    /// When the open step's first reading was taken.
    var stepFirst: Int64 = 0
    /// The number of the stream's beacon (`PlaceNumbers`), which the `hmm` decision compares.
    var place: Int32 = 0

    var beacon: String { observed.site.beacon }
    var radius: Double? { observed.site.radius }
    var device: String { observed.carried.identity }
    var node: String { observed.site.node }
    var venue: String? { observed.site.venue }

    var key: LinkKey { LinkKey(device: device, node: node, beacon: beacon) }

    /// tx - smoothed RSSI: the larger, the further.
    var pathLoss: Double { tx - smoother.value }
}

/// The best reading of one beacon.
struct Score: Sendable {
    var beacon: String
    var pathLoss: Double
    /// Index of the reading in the track's links.
    var link: Int
}

/// A beacon about to win an enter or a move, since when, how often it was heard since, and how
/// long it must last to win.
struct Candidate: Sendable {
    var beacon: String
    var since: Int64
    var sightings: Int
    var dwell: Int64
    /// When its dwell began: `since`, or for a move earlier, when other beacons had beaten the
    /// user's by the margin, without a break, until this one became the nearest of them.
    var dwellSince: Int64

    init(beacon: String, since: Int64, sightings: Int, dwell: Int64 = 0, dwellSince: Int64? = nil) {
        self.beacon = beacon
        self.since = since
        self.sightings = sightings
        self.dwell = dwell
        self.dwellSince = dwellSince ?? since
    }
}

/// A beacon ahead of the others by some measure, and since when.
struct Lead: Sendable {
    var beacon: String
    var since: Int64
}

/// A challenger's case against the user's beacon under the `evidence` decision: its lead beyond
/// the margin summed since `since` (dB·s), how fast that sum grows now (dB, per second), and the
/// sum that wins the move.
struct Evidence: Sendable {
    var beacon: String
    var amount: Double
    var since: Int64
    var rate: Double
    var threshold: Double
}

/// Everything the engine tracks for one user.
struct UserTrack: Sendable {
    let user: String
    var links: [Link] = []
    var presence: Presence?
    var candidate: Candidate?
    /// Since when another beacon has been nearer than the current one, margin or not.
    var nearer: Lead?
    /// The beacon nearest by the links' quick averages (`RSSISmoother.quick`), and since when: a
    /// move is dated no later than when its beacon took this lead.
    var quickLeader: Lead?
    /// The challengers' evidence (the `evidence` decision), and when it was last added up.
    var evidence: [Evidence] = []
    var evidenceTime: Int64 = 0
    /// Where the user is believed to be (the `hmm` decision), kept out of line: a track moves on
    /// every observation, its belief changes once a step.
    private var beliefBox: BeliefBox?
    var belief: PlaceBelief? {
        get { beliefBox?.belief }
        set { beliefBox = newValue.map(BeliefBox.init) }
    }

    /// Takes the belief's box out of the track to change it in place (`putBeliefBox` puts it
    /// back): a box another copy of the track still shares is copied first, so that changing it
    /// changes no other value.
    mutating func takeBeliefBox() -> BeliefBox? {
        guard var box = beliefBox.take() else { return nil }
        if !isKnownUniquelyReferenced(&box) { box = BeliefBox(box.belief) }
        return box
    }

    /// Puts back a box taken with `takeBeliefBox`.
    mutating func putBeliefBox(_ box: BeliefBox) {
        beliefBox = box
    }

    /// Forgets the belief's sightings (after an exit, an enter needs new ones).
    mutating func forgetBeliefSightings() {
        guard let box = takeBeliefBox() else { return }
        box.belief.forgetSightings()
        beliefBox = box
    }
    /// The belief's open step, read without copying the belief.
    var beliefOpenStep: Int64? { beliefBox?.belief.openStep }
    /// Whether steps of nothing can decide nothing more for the user (`PlaceBelief.isQuiet`): the
    /// track then needs no look at the end of each step.
    var isBeliefQuiet: Bool {
        guard let box = beliefBox else { return true }
        return box.belief.isQuiet(since: presence?.entered ?? lastExit, heardInOpenStep: links.contains { $0.stepReadings > 0 })
    }
    var graceUntil: Int64?
    /// When the last session ended by timeout: a later enter is not dated before it.
    var lastExit: Int64?
    /// The engine's `touches` when an observation was last applied to the track.
    var touched: UInt64 = 0
    /// The last sighting as `takeLastSeen` last took it.
    var lastSeenTaken = Int64.min

    init(user: String) {
        self.user = user
    }

    /// Nothing to remember: not present, no candidate, no reading.
    var isIdle: Bool {
        // Matched rather than compared with nil, which copies the whole session first.
        guard links.isEmpty, case .none = presence, case .none = candidate else { return false }
        return true
    }

    /// At a beacon (matched rather than compared with nil, which copies the session).
    var isPresent: Bool {
        if case .some = presence { true } else { false }
    }

    /// A slot no user holds.
    var isFree: Bool {
        user.isEmpty
    }
}

/// A user's belief, out of line, changed in place by the one track that holds it.
final class BeliefBox: @unchecked Sendable {
    // Unchecked: a box is changed only while taken out of its track (`UserTrack.takeBeliefBox`),
    // which copies a box that any other value still shares first; so no value another thread can
    // see ever changes, as with a value type's copy on write. For the same reason the belief's
    // accesses need no run-time exclusivity check, which cost about 400 instructions of the 4,400
    // that close a step (scripts/instruction-cost.sh): a taken box has one holder, the engine.
    @exclusivity(unchecked) var belief: PlaceBelief

    init(_ belief: PlaceBelief) {
        self.belief = belief
    }
}
