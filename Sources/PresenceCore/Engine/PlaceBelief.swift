#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One user's belief about where they are, for the `hmm` decision: a hidden-Markov model over
/// "away" and the few places they are heard near, in steps of `PlaceBelief.step`. It keeps the
/// filtered belief just before its window and the evidence of each step in the window, so that
/// every step can be smoothed with all the evidence that came after it (a fixed-lag smoother), and
/// the filtered belief after the window's last step, kept as each step closes.
///
/// Slot 0 is "away" (near no place); the other slots each hold a place while it is heard, and
/// are given back when it is no longer. Storage is fixed when the belief is made: stepping
/// allocates nothing.
struct PlaceBelief: Sendable {
    typealias Vector = SIMD8<Float>
    /// The length of a step, ms.
    static let step: Int64 = 500
    /// Slots, "away" included: a user is rarely heard near more than seven places at once; when
    /// they are, the least likely place gives up its slot.
    static let slots = Vector.scalarCount

    /// The place in each slot, by its number (`PlaceNumbers`); 0 for "away" (slot 0) and for a
    /// free slot.
    private(set) var places = SIMD8<Int32>.zero
    /// Sightings of each slot's place since it took the slot (an enter needs a few).
    private(set) var sightings: SIMD8<Int32> = .zero
    /// When each slot's place was first heard since it took the slot: nothing is dated before.
    private(set) var firstHeard = SIMD8<Int64>(repeating: .min)
    /// 1 for "away" and each slot that holds a place, 0 for a free slot.
    private(set) var active: Vector = Vector(1, 0, 0, 0, 0, 0, 0, 0)
    /// The filtered probabilities of the slots just before the window's first step.
    private var origin = Vector(1, 0, 0, 0, 0, 0, 0, 0)
    /// Each window step's evidence (likelihoods, one per slot, in a byte each), in a ring whose
    /// oldest step is at `oldest` once the window is full: closing a step writes over the step
    /// that leaves.
    private var evidence: [PackedLikelihoods]
    /// When each window step's first reading was taken, ms into the step (`noReading`: nothing
    /// heard in it), in the same ring: an event dated to a step is dated no earlier, so that the
    /// half-second grid does not date a move before the readings that showed it.
    private var firstReadings: [UInt16]
    private static let noReading = UInt16.max
    /// Where the ring's oldest step is.
    private var oldest = 0
    /// The filtered probabilities after the window's last step (not current while
    /// `latestIsStale`).
    private(set) var latest = Vector(1, 0, 0, 0, 0, 0, 0, 0)
    /// Set when slots changed with their filtering deferred (`claimSlot`, `release`): `latest` is
    /// worked out again once, when it is next needed, rather than after each change.
    private var latestIsStale = false
    /// The steps the window holds at most: the lag, and the step being decided.
    let window: Int
    /// The open step, whose readings are still being gathered (time / `step`).
    var openStep: Int64
    /// The last closed step in which anything was heard (`Int64.min`: none yet).
    private(set) var lastHeardStep = Int64.min

    /// A belief that the user is away, at the step holding `time`, keeping `lagSteps` steps of lag.
    init(at time: Int64, lagSteps: Int) {
        window = lagSteps + 1
        evidence = []
        evidence.reserveCapacity(window)
        firstReadings = []
        firstReadings.reserveCapacity(window)
        openStep = Self.stepIndex(of: time)
    }

    /// The step holding `time` (floored, so that times before 1970 land in the right step).
    static func stepIndex(of time: Int64) -> Int64 {
        time >= 0 ? time / step : (time + 1) / step - 1
    }

    /// Whether steps in which nothing is heard can decide nothing more, so that they can pass at
    /// once and the user needs no look until they are heard or time out: nothing heard in the open
    /// step or in the window (a step of nothing does not change how the window's steps are
    /// smoothed; it only spreads the belief, which makes no place more certain), and the user's
    /// last enter or exit (`since`), before which no step counts, older than the window. Inlined,
    /// so that asking a belief in its box reads the few fields it needs rather than copying it.
    @inline(__always)
    func isQuiet(since: Int64?, heardInOpenStep: Bool) -> Bool {
        let windowStart = openStep - Int64(window)
        guard !heardInOpenStep, lastHeardStep < windowStart, isFull || lastHeardStep == .min else { return false }
        guard let since else { return true }
        return Self.stepIndex(of: since) < windowStart
    }

    /// Whether the window holds as many steps as the lag asks for.
    var isFull: Bool {
        @inline(__always) get { evidence.count == window }
    }

    /// How many steps the window holds.
    var count: Int { evidence.count }

    /// Where the window's step `step` (0: the oldest) is in the ring.
    @inline(__always)
    private func ring(_ step: Int) -> Int {
        let index = oldest + step
        return index >= window ? index - window : index
    }

    /// When the window's step `step` (0: the oldest) first heard a reading; `Int64.max`: never.
    func firstReading(at step: Int) -> Int64 {
        let offset = firstReadings[ring(step)]
        guard offset != Self.noReading else { return .max }
        return (openStep - Int64(evidence.count) + Int64(step)) * Self.step + Int64(offset)
    }

    /// The place the readings of the window's step `step` alone make likeliest (nil: nothing was
    /// heard in it), and whether any other place is as likely there.
    func likeliestPlace(at step: Int) -> (slot: Int, alone: Bool)? {
        guard firstReadings[ring(step)] != Self.noReading else { return nil }
        let likelihoods = evidence[ring(step)].unpacked
        var best = 1
        for slot in 2 ..< Self.slots where active[slot] > 0 && (active[best] == 0 || likelihoods[slot] > likelihoods[best]) { best = slot }
        guard active[best] > 0 else { return nil }
        let alone = !(1 ..< Self.slots).contains { $0 != best && active[$0] > 0 && likelihoods[$0] >= likelihoods[best] }
        return (best, alone)
    }

    /// The slot of the place numbered `place`, if it has one.
    @inline(__always)
    func slot(of place: Int32) -> Int? {
        guard place != 0 else { return nil }
        for index in 1 ..< Self.slots where places[index] == place { return index }
        return nil
    }

    /// The slot of the place numbered `place`, given one if it has none: a free slot, or the one
    /// whose place is least likely now (never `keep`'s; 0: none to keep). A new place starts with
    /// no probability and, for the window's past steps, the likelihood `pastLikelihood`. With
    /// `deferringFilter`, `latest` is not current until the next `close` (a step that changes
    /// several slots filters its window once, not once per change).
    mutating func claimSlot(for place: Int32, keep: Int32, pastLikelihood: Float, stay: Float, deferringFilter: Bool = false) -> Int {
        if let existing = slot(of: place) { return existing }
        var chosen = -1
        for index in 1 ..< Self.slots where places[index] == 0 {
            chosen = index
            break
        }
        if chosen < 0 {
            refilterIfStale(stay: stay)
            var lowest = Float.infinity
            for index in 1 ..< Self.slots where places[index] != keep && latest[index] < lowest {
                lowest = latest[index]
                chosen = index
            }
        }
        release(chosen, stay: stay, deferringFilter: true)
        places[chosen] = place
        active[chosen] = 1
        for step in evidence.indices { evidence[step].set(chosen, pastLikelihood) }
        refilter(stay: stay, deferring: deferringFilter)
        return chosen
    }

    /// Gives a slot back: its probability goes to the others, in proportion. With
    /// `deferringFilter`, as for `claimSlot`.
    mutating func release(_ slot: Int, stay: Float, deferringFilter: Bool = false) {
        guard slot > 0 else { return }
        places[slot] = 0
        sightings[slot] = 0
        firstHeard[slot] = .min
        active[slot] = 0
        origin[slot] = 0
        origin = Self.normalised(origin, active)
        for step in evidence.indices { evidence[step].set(slot, 0) }
        refilter(stay: stay, deferring: deferringFilter)
    }

    /// Works `latest` out again now, or marks it to be when next needed.
    private mutating func refilter(stay: Float, deferring: Bool) {
        if deferring {
            latestIsStale = true
        } else {
            latest = filter(stay: stay)
            latestIsStale = false
        }
    }

    private mutating func refilterIfStale(stay: Float) {
        if latestIsStale { refilter(stay: stay, deferring: false) }
    }

    /// Forgets the sightings (after an exit, an enter needs new ones).
    mutating func forgetSightings() {
        sightings = .zero
    }

    /// A reading of the slot's place taken at `time`.
    mutating func heard(_ slot: Int, at time: Int64) {
        let first = firstHeard.lane(slot)
        if first == .min || time < first { firstHeard.setLane(slot, time) }
    }

    /// `count` more sightings of the slot's place.
    mutating func countSightings(_ slot: Int, _ count: Int32) {
        let (sum, overflow) = sightings.lane(slot).addingReportingOverflow(count)
        sightings.setLane(slot, overflow ? .max : sum)
    }

    /// Closes the open step with `likelihoods` (one per slot; free slots ignored) and the time
    /// of its first reading: it joins the window, whose oldest step leaves it into the filtered
    /// origin when the window is full.
    mutating func close(_ likelihoods: Vector, firstReading: Int64 = .max, stay: Float) {
        refilterIfStale(stay: stay)
        let packed = PackedLikelihoods(likelihoods * active)
        let offset = firstReading == .max ? Self.noReading : UInt16(min(max(firstReading - openStep * Self.step, 0), Self.step - 1))
        if evidence.count == window {
            origin = Self.normalised(Self.transition(origin, active, stay: stay) * evidence[oldest].unpacked, active)
            evidence[oldest] = packed
            firstReadings[oldest] = offset
            oldest = oldest + 1 == window ? 0 : oldest + 1
        } else {
            evidence.append(packed)
            firstReadings.append(offset)
        }
        latest = Self.normalised(Self.transition(latest, active, stay: stay) * packed.unpacked, active)
        if firstReading != .max { lastHeardStep = openStep }
        openStep += 1
    }

    /// Closes every step before `target` as a step in which nothing was heard, at once: past the
    /// window's own steps, each such step only spreads the origin (`transition`), and many of them
    /// are one power of the transition, which has a closed form. Decides nothing: the caller
    /// knows that no step of nothing can bring a decision (`isQuiet`).
    mutating func passQuietSteps(to target: Int64, stay: Float) {
        let count = target - openStep
        guard count > 0 else { return }
        let nothing = Vector(repeating: 1)
        for _ in 0 ..< min(count, Int64(window)) { close(nothing, stay: stay) }
        let beyond = count - Int64(window)
        guard beyond > 0 else { return }
        // The window now holds steps of nothing only: each further step pushes one of them into
        // the origin and appends another, which leaves the window as it is.
        origin = Self.spread(origin, active, stay: stay, steps: beyond)
        openStep += beyond
        refilter(stay: stay, deferring: false)
    }

    /// `steps` steps of the model at once: with `n` active slots, the transition keeps the
    /// uniform belief and scales every departure from it by (n·stay − 1) / (n − 1) per step.
    private static func spread(_ belief: Vector, _ active: Vector, stay: Float, steps: Int64) -> Vector {
        let count = active.sum()
        guard count > 1, steps > 0 else { return belief }
        let uniform = active / count
        let factor = Float(pow(Double((count * stay - 1) / (count - 1)), Double(steps)))
        return Self.normalised(uniform + factor * (belief * active - uniform), active)
    }

    /// The smoothed probabilities of the slots at every step of the window, oldest first, in
    /// `into` (which holds `count` vectors).
    func smooth(stay: Float, into: inout [Vector]) {
        into.removeAll(keepingCapacity: true)
        var forward = origin
        for step in evidence.indices {
            forward = Self.normalised(Self.transition(forward, active, stay: stay) * evidence[ring(step)].unpacked, active)
            into.append(forward)
        }
        var backward = active
        for step in stride(from: evidence.count - 1, through: 0, by: -1) {
            into[step] = Self.normalised(into[step] * backward, active)
            backward = Self.normalised(Self.transition(backward * evidence[ring(step)].unpacked, active, stay: stay), active)
        }
    }

    /// The filtered probabilities after the window's last step, worked out from the origin (what
    /// `latest` keeps as steps close, anew after a slot changed).
    private func filter(stay: Float) -> Vector {
        var belief = origin
        for step in evidence.indices { belief = Self.normalised(Self.transition(belief, active, stay: stay) * evidence[ring(step)].unpacked, active) }
        return belief
    }

    /// One step of the model: stay with probability `stay`, else go to any other active slot
    /// alike. The matrix is symmetric, so the same step serves forward and backward.
    private static func transition(_ belief: Vector, _ active: Vector, stay: Float) -> Vector {
        let others = active.sum() - 1
        guard others > 0 else { return belief }
        let move = (1 - stay) / others
        let total = (belief * active).sum()
        return active * (stay * belief + move * (total - belief))
    }

    private static func normalised(_ belief: Vector, _ active: Vector) -> Vector {
        let total = belief.sum()
        guard total > 0, total.isFinite else { return active / active.sum() }
        return belief / total
    }
}
