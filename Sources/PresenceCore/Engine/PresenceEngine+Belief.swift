#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension PresenceEngine {
    /// How long a clear case must stay all but certain before it is decided without waiting for
    /// the lag, ms: longer than a moment's shadow (a body between tag and node), short enough
    /// that a clear move is published within 4 s.
    static let clearSpan: Int64 = 2_000

    /// How long a present user's place must be all but certainly left, with no other place
    /// settled, before they go to the one leading now, ms (or the lag, if shorter), when two
    /// places have held at least `levelShare` each all along (two beacons as near as each other):
    /// a clear move between two such beacons is published within the contract's 6 s however long
    /// the lag. Otherwise it waits the whole lag: someone walking on past a place is not moved to
    /// it on the way.
    static let leftSpan: Int64 = 4_000
    static let levelShare: Float = 0.1

    /// The `hmm` decision, step by step: closes every step of the user's belief that ends by
    /// `time` with the readings heard in it, and after each, enters or moves the user where the
    /// smoothed belief settles.
    mutating func closeSteps(_ track: inout UserTrack, upTo time: Int64, events: inout [PresenceEvent]) {
        guard configuration.decision == .hmm else { return }
        let target = PlaceBelief.stepIndex(of: time)
        // Most calls close nothing: they are answered without moving the belief out.
        if let open = track.beliefOpenStep, open >= target { return }
        guard let box = track.takeBeliefBox() else {
            track.belief = PlaceBelief(at: time, lagSteps: Int(configuration.lag / PlaceBelief.step))
            return
        }
        while box.belief.openStep < target {
            if box.belief.isQuiet(since: track.presence?.entered ?? track.lastExit, heardInOpenStep: track.links.contains { $0.stepReadings > 0 }) {
                box.belief.passQuietSteps(to: target, stay: stepModel.stay)
                break
            }
            closeStep(&track, &box.belief, events: &events)
            statistics.steps += 1
        }
        track.putBeliefBox(box)
    }

    /// Closes the belief's open step: what each place's readings said in it (a place not heard in
    /// the step counts with its smoothed reading, when any place was heard), then the decision.
    private mutating func closeStep(_ track: inout UserTrack, _ belief: inout PlaceBelief, events: inout [PresenceEvent]) {
        let end = TimeBounds.sum(belief.openStep * PlaceBelief.step, PlaceBelief.step)
        let here = track.presence?.beacon
        // The number a stream of the user's beacon carries (a few short keys compared), else
        // the one the beacon's key hashes to.
        let hereNumber = here.map { here in track.links.first { $0.beacon == here }?.place ?? placeNumbers.existing(here) } ?? 0
        let stay = stepModel.stay
        let cap = configuration.evidenceCap
        // Each place's reading: the mean heard in the step, else the smoothed one (fresh, or
        // held where the user is; choosing by position, its distance from the estimated
        // position). The nearest few keep or take a slot (the user's place keeps its own); the
        // others give theirs back.
        var places: [StepPlace] = []
        swap(&places, &stepPlaces)
        defer {
            places.removeAll(keepingCapacity: true)
            swap(&places, &stepPlaces)
        }
        var heard = false
        var furthest: Int?
        let signal = configuration.choice == .signal
        let layout = configuration.layoutWeight > 0
        var fit = LayoutFit()
        swap(&fit, &layoutFit)
        defer { swap(&fit, &layoutFit) }
        fit.begin()
        forEachReading(track.links, here: here, at: end) { links, index, figure in
            let readings = links[index].stepReadings
            if readings > 0 { heard = true }
            let mean = signal && readings > 0 ? Double(links[index].stepLoss) / Double(readings) : nil
            StepPlace.gather(&places, furthest: &furthest, place: links[index].place, smoothed: figure, heard: mean, readings: readings, first: links[index].stepFirst, keep: hereNumber)
            if layout, let anchor = links[index].observed.anchor {
                fit.add(node: anchor, loss: figure, place: links[index].place, at: links[index].observed.place ?? anchor)
            }
        }
        for index in track.links.indices where track.links[index].stepReadings > 0 {
            track.links[index].stepReadings = 0
            track.links[index].stepLoss = 0
        }
        places.sort { $0.loss != $1.loss ? $0.loss < $1.loss : placeNumbers.name($0.place) < placeNumbers.name($1.place) }
        for slot in 1 ..< PlaceBelief.slots where belief.places[slot] != 0 && belief.places[slot] != hereNumber {
            if !places.contains(where: { $0.place == belief.places[slot] }) { belief.release(slot, stay: stay, deferringFilter: true) }
        }
        // A place new to the belief, for the steps before it was heard: for someone at a place,
        // as if heard far away (a passing reading does not rewrite where they were); for someone
        // at none, nothing against it. Someone arriving is heard by the nodes in turn, as each
        // reports, and a node not yet heard from is not one that does not hear them: the first
        // to report would otherwise win the enter.
        let pastLikelihood = track.isPresent ? stepModel.far : 1
        var loss = SIMD8<Double>(repeating: .infinity)
        for place in places {
            let slot = belief.claimSlot(for: place.place, keep: hereNumber, pastLikelihood: pastLikelihood, stay: stay, deferringFilter: true)
            loss.setLane(slot, place.loss)
            belief.countSightings(slot, place.readings)
            if place.readings > 0 { belief.heard(slot, at: place.first) }
        }
        let hold = belief.slot(of: hereNumber)
        var levels = SIMD8<Double>(repeating: configuration.deadZone)
        if let hold { levels.setLane(hold, levels.lane(hold) + configuration.holdMargin) }
        if let here, !self.places.isEmpty { applyPolicies(&loss, &levels, belief, here: here, hold: hold) }
        var likelihoods = PlaceBelief.Vector(repeating: 1)
        if heard {
            let nearest = loss.min()
            let awayLoss = stepModel.awayLoss
            let weight = configuration.stepWeight
            likelihoods.setLane(0, Float(exp(-weight * min(cap, max(0, awayLoss - nearest)))))
            for slot in 1 ..< PlaceBelief.slots where belief.active[slot] > 0 {
                let level = levels.lane(slot), placeLoss = loss.lane(slot)
                let behind = placeLoss == .infinity ? cap : min(cap, max(0, placeLoss - nearest - level) + max(0, placeLoss - awayLoss))
                likelihoods.setLane(slot, behind == 0 ? 1 : behind == cap ? stepModel.far : Float(exp(-weight * behind)))
            }
        }
        if heard, layout, fit.isUsable {
            Self.weighLayout(&likelihoods, &fit, places: belief.places, active: belief.active, hold: hold,
                             exponent: configuration.pathLossExponent, weight: configuration.layoutWeight)
        }
        belief.close(likelihoods, firstReading: places.reduce(Int64.max) { min($0, $1.first) }, stay: stay)
        decide(&track, belief, here: hereNumber, stay: stay, at: end, events: &events)
    }

    /// Weighs each place's likelihood (the belief's slots: their `places`, those `active`; passed
    /// alone, as are the settings, so that the call copies neither the belief nor the engine's
    /// configuration) by how much worse the step's readings fit the layout were the user there
    /// (`LayoutFit`) than at the user's own place `hold` (for someone at no place, or whose place
    /// has no position, the place that fits best). The layout only holds: it keeps out
    /// a challenger that fits worse and never pushes one that fits better, which the readings of
    /// its own nodes must win as before (a body turned away from half the nodes looks like a step
    /// sideways). A place the layout cannot fit (no position, or too few readings on its floor) is
    /// left as its own nodes put it.
    private static func weighLayout(_ likelihoods: inout PlaceBelief.Vector, _ fit: inout LayoutFit, places: SIMD8<Int32>, active: PlaceBelief.Vector, hold: Int?,
                                    exponent: Double, weight: Double) {
        var misfits = SIMD8<Double>(repeating: .infinity)
        for slot in 1 ..< PlaceBelief.slots where active[slot] > 0 {
            misfits.setLane(slot, fit.misfit(of: places[slot], exponent: exponent) ?? .infinity)
        }
        let own = hold.map { misfits[$0] } ?? .infinity
        let reference = own.isFinite ? own : misfits.min()
        guard reference.isFinite else { return }
        for slot in 1 ..< PlaceBelief.slots where misfits[slot] > reference && misfits[slot].isFinite {
            likelihoods.setLane(slot, likelihoods.lane(slot) * Float(exp(-weight * (misfits[slot] - reference))))
        }
    }

    /// The beacons' own margins and adjacency, as the `hmm` decision weighs them: a margin above
    /// the configured one holds a user at their beacon by that much more, and makes another beacon
    /// count as that much further; a beacon that is not next to the user's counts as the jump
    /// margin further; margins are about moves, so they apply only while the user is at `here`.
    /// (Beacons' own dwells belong to the `dwell` decision.)
    private func applyPolicies(_ loss: inout SIMD8<Double>, _ levels: inout SIMD8<Double>, _ belief: PlaceBelief, here: String, hold: Int?) {
        for slot in 1 ..< PlaceBelief.slots where belief.places[slot] != 0 {
            let place = placeNumbers.name(belief.places[slot])
            let extra = max(0, (self.places.policies[place]?.switchMargin ?? configuration.switchMargin) - configuration.switchMargin)
            if slot == hold {
                levels.setLane(slot, levels.lane(slot) + extra)
            } else if loss.lane(slot) != .infinity {
                loss.setLane(slot, loss.lane(slot) + extra)
                if !self.places.areNeighbours(here, place) { loss.setLane(slot, loss.lane(slot) + configuration.jumpMargin) }
            }
        }
    }

    /// Enters or moves the user where the smoothed belief settles on a place: all but certainly
    /// over the last `clearSpan` while the newest step's readings name no other place alone (a
    /// clear case: the step after a moment's blip, which says the old place again, does not
    /// publish the blip as a move), or with the settle probability at the step `lag`
    /// back while it still leads now; dated to when it began to lead. A present user whose place
    /// is all but certainly left over the last `leftSpan` (two beacons as near as each other) or
    /// the whole lag, with no one place settled, goes to the one leading now, dated to when their place stopped
    /// leading. An enter looks back at most 2 s (it comes within 3 s of steady reception) and
    /// needs the place more likely than "away"; someone all but certainly near some place over
    /// those 2 s, with none settled, enters the one leading now. With no enter dwell
    /// (`--enter-dwell 0s`), the place the newest step's readings name enters at once. `here` is
    /// the number of the user's place (`PlaceNumbers`; 0: at none).
    private mutating func decide(_ track: inout UserTrack, _ belief: PlaceBelief, here: Int32, stay: Float, at end: Int64, events: inout [PresenceEvent]) {
        guard !Self.nothingToDecide(isPresent: track.isPresent, belief, here: here, enterDwell: configuration.enterDwell) else { return }
        var smoothed: [PlaceBelief.Vector] = []
        swap(&smoothed, &smoothedWindow)
        defer { swap(&smoothed, &smoothedWindow) }
        belief.smooth(stay: stay, into: &smoothed)
        let last = smoothed.count - 1
        guard last >= 0 else { return }
        let settle = stepModel.settle
        let certain = stepModel.certain
        let clearFrom = last + 1 - Int(Self.clearSpan / PlaceBelief.step)
        let firstStep = belief.openStep - Int64(smoothed.count)
        func start(of step: Int) -> Int64 { (firstStep + Int64(step)) * PlaceBelief.step }
        /// What an event dated to `step` is dated to: its first reading, or its start.
        func date(of step: Int) -> Int64 {
            belief.firstReading(at: step) == .max ? start(of: step) : max(start(of: step), belief.firstReading(at: step))
        }
        /// The place `probability` settles on, counting only steps from `since` on (`lagged` < 0:
        /// no step that far back yet), with the step it is decided at.
        func settled(since: Int64, lagged: Int, leader: (Int) -> Int, _ probability: (Int, Int) -> Float) -> (slot: Int, step: Int)? {
            let newest = leader(last)
            if clearFrom >= 0, start(of: clearFrom) >= since, (clearFrom ... last).allSatisfy({ leader($0) == newest && probability($0, newest) >= certain }),
               belief.likeliestPlace(at: last).map({ $0.slot == newest || !$0.alone }) ?? true {
                return (newest, last)
            }
            guard lagged >= 0, start(of: lagged) >= since, leader(lagged) == newest, probability(lagged, newest) >= settle else { return nil }
            return (newest, lagged)
        }

        if let presence = track.presence {
            let current = belief.slot(of: here)
            func share(_ step: Int, _ slot: Int) -> Float { smoothed[step][slot] / max(1e-6, 1 - smoothed[step][0]) }
            let lagged = last + 1 == belief.window ? 0 : -1
            var target: Int
            var first: Int
            if let place = settled(since: presence.entered, lagged: lagged, leader: { Self.strongestPlace(smoothed[$0], besides: nil) }, share),
               place.slot != current {
                target = place.slot
                first = place.step
                while first > 0, Self.strongestPlace(smoothed[first - 1], besides: nil) == target { first -= 1 }
            } else if let current, case let leftFrom = leftSince(smoothed, current: current, lagged: lagged, share), leftFrom >= 0,
                      start(of: leftFrom) >= presence.entered,
                      (leftFrom ... last).allSatisfy({ 1 - share($0, current) >= certain }) {
                target = Self.strongestPlace(smoothed[last], besides: current)
                first = last
                while first > 0, Self.strongestPlace(smoothed[first - 1], besides: nil) != current { first -= 1 }
            } else {
                return
            }
            guard let score = bestReading(of: belief.places[target], track, at: end) else { return }
            let at = max(date(of: first), presence.entered, belief.firstHeard[target])
            events.append(exitEvent(presence, at: at, reason: .moved))
            enter(&track, score, at: at, events: &events)
        } else {
            let exited = track.lastExit ?? .min
            let enterLag = last - Int(min(configuration.lag, 2_000) / PlaceBelief.step)
            var target: Int
            var first: Int
            if configuration.enterDwell == 0, let named = belief.likeliestPlace(at: last), start(of: last) >= exited {
                // No enter dwell asked for: the place the newest step's readings name enters at once.
                target = named.slot
                first = last
            } else if let place = settled(since: exited, lagged: enterLag, leader: { Self.strongest(smoothed[$0]) }, { smoothed[$0][$1] }), place.slot > 0 {
                target = place.slot
                first = place.step
            } else if enterLag >= 0, start(of: enterLag) >= exited, (enterLag ... last).allSatisfy({ 1 - smoothed[$0][0] >= certain }) {
                // Near some place for certain, with none settled (two as near as each other).
                target = Self.strongestPlace(smoothed[last], besides: nil)
                first = last
            } else {
                return
            }
            guard belief.sightings[target] >= configuration.enterSightings, let score = bestReading(of: belief.places[target], track, at: end) else {
                return
            }
            while first > 0, Self.strongest(smoothed[first - 1]) == target { first -= 1 }
            enter(&track, score, at: max(date(of: first), exited, belief.firstHeard[target]), events: &events)
        }
    }

    /// The first step of the span over which a present user at `current` must have all but
    /// certainly left it to go to the place leading now (-1: the window is too short yet): the
    /// last `leftSpan` when the two places leading now held `levelShare` each all along it, the
    /// whole lag otherwise.
    private func leftSince(_ smoothed: [PlaceBelief.Vector], current: Int?, lagged: Int, _ share: (Int, Int) -> Float) -> Int {
        let last = smoothed.count - 1
        let from = last + 1 - Int(min(configuration.lag, Self.leftSpan) / PlaceBelief.step)
        let leader = Self.strongestPlace(smoothed[last], besides: current)
        let runnerUp = Self.strongestPlace(smoothed[last], besides: current, leader)
        guard from >= 0, leader > 0, runnerUp > 0,
              (from ... last).allSatisfy({ min(share($0, leader), share($0, runnerUp)) >= Self.levelShare }) else { return lagged }
        return from
    }

    /// Whether the newest step rules every decision out, so that the window need not be smoothed
    /// (as it mostly need not: someone staying where they are, someone no one is near). The newest
    /// smoothed step is the filtered belief (`PlaceBelief.latest`), and every rule of `decide` needs
    /// a place to lead in it: for a present user, a place other than theirs, or theirs so unlikely
    /// that it is all but certainly left, which it cannot be while it leads (its share is then at
    /// least a seventh, and `certain` is at least 0.9); for someone at no place, a place ahead of
    /// "away", or the places together all but certain, which they cannot be while "away" leads
    /// (with no enter dwell, any step that heard a place). A lead counts when it is clear by more
    /// than rounding.
    private static func nothingToDecide(isPresent: Bool, _ belief: PlaceBelief, here: Int32, enterDwell: Int64) -> Bool {
        let latest = belief.latest
        let clear: Float = 1.0001
        var leader = 0
        if !isPresent, enterDwell == 0, belief.count > 0, belief.likeliestPlace(at: belief.count - 1) != nil { return false }
        if isPresent {
            guard let current = belief.slot(of: here), 1 - latest[0] >= 1e-5 else { return false }
            leader = current
        }
        for slot in 1 ..< PlaceBelief.slots where slot != leader && belief.active[slot] > 0 && latest[slot] * clear >= latest[leader] {
            return false
        }
        return true
    }

    /// The nearest reading of the beacon numbered `place` that counts at `time` (`forEachReading`;
    /// ties as in `nearest`).
    private func bestReading(of place: Int32, _ track: UserTrack, at time: Int64) -> Score? {
        var best: Score?
        forEachReading(track.links, here: track.presence?.beacon, at: time) { links, index, figure in
            if links[index].place == place, nearer(figure, index, than: best, in: links) {
                best = Score(beacon: links[index].beacon, pathLoss: figure, link: index)
            }
        }
        return best
    }

    /// The most likely slot, "away" included (ties to the lower slot).
    private static func strongest(_ belief: PlaceBelief.Vector) -> Int {
        var best = 0
        for slot in 1 ..< PlaceBelief.slots where belief[slot] > belief[best] { best = slot }
        return best
    }

    /// The most likely place ("away" and the slots `besides` left out; ties to the lower slot).
    private static func strongestPlace(_ belief: PlaceBelief.Vector, besides: Int?, _ alsoBesides: Int? = nil) -> Int {
        var best = -1
        for slot in 1 ..< PlaceBelief.slots where slot != besides && slot != alsoBesides && (best < 0 || belief[slot] > belief[best]) { best = slot }
        return best
    }
}

/// One place (by number, `PlaceNumbers`) as a step of the `hmm` decision weighs it: its smoothed
/// figure and the mean heard in the step (the nearest of its readings each), how many readings the
/// step heard, and the first.
struct StepPlace: Sendable {
    var place: Int32
    var smoothed = Double.infinity
    var heard = Double.infinity
    var readings: Int32 = 0
    var first = Int64.max

    /// The place's figure for the step: what was heard in it, else the smoothed one.
    var loss: Double { readings > 0 && heard != .infinity ? heard : smoothed }

    /// Adds a reading of the place numbered `number` to `places`, which keeps the nearest
    /// `PlaceBelief.slots − 1` places only (never dropping `keep`'s): a place already kept takes
    /// it, a new one replaces the furthest kept if it is nearer. No sort and no search beyond
    /// those few; `furthest` remembers which kept place is furthest (nil: not known) for the
    /// next call, so that a venue where many nodes hear the user looks for it rarely.
    static func gather(_ places: inout [StepPlace], furthest: inout Int?, place number: Int32, smoothed: Double, heard: Double?,
                       readings: Int32, first: Int64, keep: Int32) {
        var place: StepPlace
        let kept = places.firstIndex { $0.place == number }
        if let kept {
            place = places[kept]
        } else {
            place = StepPlace(place: number)
        }
        place.smoothed = min(place.smoothed, smoothed)
        if let heard { place.heard = min(place.heard, heard) }
        place.readings = place.readings.addingReportingOverflow(readings).overflow ? .max : place.readings + readings
        if readings > 0 { place.first = min(place.first, first) }
        if let kept {
            places[kept] = place
            furthest = nil
        } else if places.count < PlaceBelief.slots - 1 {
            places.append(place)
            furthest = nil
        } else {
            if furthest == nil {
                for index in places.indices where places[index].place != keep {
                    if furthest.map({ places[index].loss > places[$0].loss }) ?? true { furthest = index }
                }
            }
            if let replaced = furthest, number == keep || place.loss < places[replaced].loss {
                places[replaced] = place
                furthest = nil
            }
        }
    }
}

