#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension PresenceEngine {
    /// Applies one observation at its time: updates the reading and marks its user for a decision
    /// at the end of the `advance` (a timeout that fell due before it is decided first).
    mutating func apply(_ observation: Observation, events: inout [PresenceEvent]) {
        statistics.observations += 1
        let index = trackIndex(for: observation.link)
        var track = takeTrack(index)
        expireIfDue(&track, at: observation.time, events: &events)
        closeSteps(&track, upTo: observation.time, events: &events)
        let settings = configuration.smoothing
        let linkIndex: Int
        if let existing = track.links.firstIndex(where: { $0.observed.isIdentical(to: observation.link) })
            ?? track.links.firstIndex(where: { $0.observed.isSameStream(as: observation.link) }) {
            linkIndex = existing
            track.links[existing].smoother.update(rssi: observation.rssi, at: observation.time, settings: settings)
            track.links[existing].tx = observation.tx
            track.links[existing].txKnown = observation.txKnown
            if !track.links[existing].observed.isIdentical(to: observation.link) {
                track.links[existing].observed = observation.link
                track.links[existing].place = placeNumbers.number(of: observation.link.beacon)
            }
        } else {
            // Grown one link at a time, not doubled: a device is heard by a few nodes, and a
            // doubled array of three streams would keep room for a fourth in every track.
            track.links.reserveCapacity(track.links.count + 1)
            track.links.append(Link(
                observed: observation.link, smoother: RSSISmoother(rssi: observation.rssi, at: observation.time, settings: settings),
                tx: observation.tx, txKnown: observation.txKnown, place: placeNumbers.number(of: observation.link.beacon)))
            linkIndex = track.links.count - 1
        }
        if configuration.decision == .hmm {
            if track.links[linkIndex].stepReadings == 0 { track.links[linkIndex].stepFirst = observation.time }
            track.links[linkIndex].stepLoss += Float(observation.tx - observation.rssi)
            track.links[linkIndex].stepReadings += 1
        }
        if qualifies(track.links[linkIndex]) {
            if track.presence?.beacon == observation.link.beacon, observation.time >= track.presence?.lastSeen ?? .max {
                track.presence?.lastSeen = observation.time
                if track.presence?.lastNode != observation.link.node { track.presence?.lastNode = observation.link.node }
            }
            if track.candidate?.beacon == observation.beacon {
                track.candidate?.sightings += 1
            }
        }
        touches += 1
        track.touched = touches
        putTrack(&track, index)
        lookSoon(index)
    }

    /// A reading is fresh within `staleAfter`.
    func isFresh(_ link: Link, at time: Int64) -> Bool {
        time - link.smoother.lastTime <= configuration.staleAfter
    }

    /// Fresh, or held: the node that took the reading is suspected down, so its last evidence
    /// stands for the beacon the user is at (a neighbour must beat it by the margin to win). Held
    /// evidence defends; it never wins a move or an enter by itself.
    func isFreshOrHeld(_ link: Link, at time: Int64) -> Bool {
        isFresh(link, at: time) || isSuspect(link.node, since: link.smoother.lastTime, at: time)
    }

    func qualifies(_ link: Link) -> Bool {
        guard let radius = link.radius else { return true }
        return configuration.distance(pathLoss: link.pathLoss) <= radius
    }

    /// The nearest qualifying readings: overall, at the user's beacon, and elsewhere; for the
    /// beacon the user is at, held evidence counts too. Ties go to the smaller beacon key, then
    /// the smaller reading key, so the choice never depends on the order readings were stored in.
    /// With them, the beacon of the same readings nearest by their quick averages
    /// (`RSSISmoother.quick`, signal only, ties to the smaller beacon key), which dates a move.
    func nearest(_ track: UserTrack, at time: Int64) -> (overall: Score?, current: Score?, elsewhere: Score?, quick: String?) {
        var overall: Score?
        var current: Score?
        var elsewhere: Score?
        var quickest: (beacon: String, pathLoss: Double)?
        let here = track.presence?.beacon
        forEachReading(track.links, here: here, at: time) { links, index, pathLoss in
            if nearer(pathLoss, index, than: overall, in: links) { overall = Score(beacon: links[index].beacon, pathLoss: pathLoss, link: index) }
            if links[index].beacon == here {
                if nearer(pathLoss, index, than: current, in: links) { current = Score(beacon: links[index].beacon, pathLoss: pathLoss, link: index) }
            } else if nearer(pathLoss, index, than: elsewhere, in: links) {
                elsewhere = Score(beacon: links[index].beacon, pathLoss: pathLoss, link: index)
            }
            let quick = links[index].tx - links[index].smoother.quick
            if quickest.map({ quick < $0.pathLoss || (quick == $0.pathLoss && links[index].beacon < $0.beacon) }) ?? true {
                quickest = (links[index].beacon, quick)
            }
        }
        return (overall, current, elsewhere, quickest?.beacon)
    }

    /// Calls `body` with every reading that counts at `time` and its nearness (path loss, or the
    /// score from the estimated position): qualifying and fresh, or, at the user's beacon `here`,
    /// held while its node is suspected down.
    @inline(__always)
    func forEachReading(_ links: [Link], here: String?, at time: Int64, _ body: (UnsafeBufferPointer<Link>, Int, Double) -> Void) {
        let position = configuration.choice == .position ? estimatedPosition(links, at: time) : nil
        links.withUnsafeBufferPointer { links in
            for index in links.indices where qualifies(links[index]) {
                guard isFresh(links[index], at: time)
                    || (links[index].beacon == here && isSuspect(links[index].node, since: links[index].smoother.lastTime, at: time)) else {
                    continue
                }
                body(links, index, position.map { score(of: links[index], from: $0) } ?? links[index].pathLoss)
            }
        }
    }

    /// Where the user is, from the fresh readings whose fixed end has coordinates; with
    /// `requireAll`, only when every fresh reading has them (else the choice of beacon falls back
    /// to the signal).
    func estimatedPosition(_ links: [Link], at time: Int64, requireAll: Bool = true) -> Position? {
        var anchors: [PositionEstimator.Anchor] = []
        anchors.reserveCapacity(links.count)
        for link in links where isFresh(link, at: time) {
            guard let anchor = link.observed.anchor else {
                if requireAll { return nil }
                continue
            }
            anchors.append(.init(x: anchor.x, y: anchor.y, floor: anchor.floor, distance: configuration.distance(pathLoss: link.pathLoss)))
        }
        return PositionEstimator.estimate(anchors)
    }

    /// A beacon's nearness to the estimated position, in the same units as path loss (dB on the
    /// log-distance model), so that the switch margin means the same: 4 dB at n = 2 is a beacon
    /// 1.6 times nearer.
    func score(of link: Link, from position: Position) -> Double {
        guard let place = link.observed.place else { return link.pathLoss }
        let distance = max(0.5, ((position.x - place.x) * (position.x - place.x) + (position.y - place.y) * (position.y - place.y)).squareRoot())
        return 10 * configuration.pathLossExponent * log10(distance)
    }

    func nearer(_ pathLoss: Double, _ index: Int, than other: Score?, in links: UnsafeBufferPointer<Link>) -> Bool {
        guard let other else { return true }
        if pathLoss != other.pathLoss { return pathLoss < other.pathLoss }
        if links[index].beacon != other.beacon { return links[index].beacon < other.beacon }
        return links[index].key < links[other.link].key
    }

    /// Enter fast, leave slow: an enter needs the nearest beacon to stay nearest for the enter
    /// dwell with enough sightings; a move needs the user's beacon to be beaten by the margin for
    /// the switch dwell, and goes to the nearest beacon that beats it, dated to when that one led.
    mutating func decide(_ track: inout UserTrack, at time: Int64, events: inout [PresenceEvent]) {
        if configuration.decision == .hmm {
            closeSteps(&track, upTo: time, events: &events)
            return
        }
        let scores = nearest(track, at: time)
        if scores.quick != track.quickLeader?.beacon {
            track.quickLeader = scores.quick.map { Lead(beacon: $0, since: time) }
        }
        if let presence = track.presence {
            let current = scores.current?.pathLoss ?? .infinity
            if let other = scores.elsewhere, other.pathLoss < current {
                if track.nearer?.beacon != other.beacon { track.nearer = Lead(beacon: other.beacon, since: time) }
            } else {
                track.nearer = nil
            }
            if configuration.decision == .evidence {
                weighEvidence(&track, presence, at: time, events: &events)
                return
            }
            guard let (challenger, rule) = challenger(track, nearest: scores.elsewhere, here: presence.beacon, current: current, at: time) else {
                track.candidate = nil
                return
            }
            // The dwell runs while the user's beacon stays beaten by the margin, whichever beacon
            // beats it most: two that take turns being nearest do not keep restarting it. A jump
            // to a beacon that is not a neighbour starts its own.
            guard let candidate = track.candidate, candidate.beacon == challenger.beacon else {
                track.candidate = Candidate(beacon: challenger.beacon, since: time, sightings: 1, dwell: rule.dwell,
                                            dwellSince: rule.isJump ? nil : track.candidate?.dwellSince)
                return
            }
            guard time - candidate.dwellSince >= candidate.dwell else { return }
            let at = moveDate(track, to: challenger.beacon, leadingSince: candidate.since, from: presence)
            events.append(exitEvent(presence, at: at, reason: .moved))
            enter(&track, challenger, at: at, events: &events)
        } else {
            guard let nearest = scores.overall else {
                track.candidate = nil
                return
            }
            guard let candidate = track.candidate, candidate.beacon == nearest.beacon else {
                track.candidate = Candidate(beacon: nearest.beacon, since: time, sightings: 1, dwell: configuration.enterDwell)
                if configuration.enterDwell == 0, configuration.enterSightings <= 1 {
                    enter(&track, nearest, at: time, events: &events)
                }
                return
            }
            guard time - candidate.since >= configuration.enterDwell, candidate.sightings >= configuration.enterSightings else { return }
            // Dated to when the beacon became the nearest, as the move is.
            enter(&track, nearest, at: max(candidate.since, track.lastExit ?? .min), events: &events)
        }
    }

    /// The date of a move from `presence` to `beacon`, which has led by the move's rule since
    /// `leadingSince`: when the beacon became the nearer one (before the margin and the dwell made
    /// it certain), as a timeout exit is dated to the last sighting, by the smoothed readings or,
    /// earlier, by the quick averages when they name it too; never before the stay it ends began.
    func moveDate(_ track: UserTrack, to beacon: String, leadingSince: Int64, from presence: Presence) -> Int64 {
        var since = leadingSince
        if let nearer = track.nearer, nearer.beacon == beacon { since = min(since, nearer.since) }
        if let leader = track.quickLeader, leader.beacon == beacon { since = min(since, leader.since) }
        return max(since, presence.entered)
    }

    /// The beacon a present user would move to, and what the move needs: the nearest other
    /// beacon that is nearer than the user's (`current`) by the margin of its move. Without
    /// beacon policies that is `nearest` with the configured margin and dwell.
    func challenger(_ track: UserTrack, nearest: Score?, here: String, current: Double, at time: Int64)
        -> (Score, PlacePolicies.MoveRule)? {
        guard !places.isEmpty else {
            guard let nearest, nearest.pathLoss + configuration.switchMargin <= current else { return nil }
            return (nearest, PlacePolicies.MoveRule(margin: configuration.switchMargin, dwell: configuration.switchDwell, isJump: false))
        }
        var best: (Score, PlacePolicies.MoveRule)?
        for score in beaconScores(track.links, here: here, at: time) where score.beacon != here {
            let rule = places.moveRule(from: here, to: score.beacon, configuration: configuration)
            guard score.pathLoss + rule.margin <= current, best.map({ score.pathLoss < $0.0.pathLoss }) ?? true else { continue }
            best = (score, rule)
        }
        return best
    }

    func enter(_ track: inout UserTrack, _ score: Score, at time: Int64, events: inout [PresenceEvent]) {
        let link = track.links[score.link]
        let distance = configuration.distance(pathLoss: score.pathLoss)
        let presence = Presence(user: track.user, device: link.device, beacon: score.beacon, venue: link.venue, entered: time,
                                lastSeen: link.smoother.lastTime, lastNode: link.node)
        track.presence = presence
        track.candidate = nil
        track.nearer = nil
        track.evidence.removeAll()
        track.graceUntil = nil
        let id = EventID.make(kind: .enter, user: track.user, device: presence.device, beacon: score.beacon, at: time, entered: nil)
        events.append(PresenceEvent(
            kind: .enter, id: id, user: track.user, device: presence.device, beacon: score.beacon, venue: link.venue, at: time,
            rssi: link.smoother.value, distance: distance, proximity: link.txKnown ? Proximity(distance: distance) : .unknown))
    }

    func expireIfDue(_ track: inout UserTrack, at time: Int64, events: inout [PresenceEvent]) {
        guard time >= timeoutDeadline(of: track), let presence = track.presence else { return }
        // Dated to the last sighting, but never before the enter: a move is dated to when its
        // beacon became the nearer one, which can follow that beacon's last reading.
        let at = max(presence.lastSeen, presence.entered)
        events.append(exitEvent(presence, at: at, reason: .timeout))
        track.lastExit = at
        track.forgetBeliefSightings()
        track.presence = nil
        track.candidate = nil
        track.evidence.removeAll()
        track.graceUntil = nil
    }

    func exitEvent(_ presence: Presence, at time: Int64, reason: PresenceEvent.ExitReason) -> PresenceEvent {
        let id = EventID.make(kind: .exit, user: presence.user, device: presence.device, beacon: presence.beacon, at: time, entered: presence.entered)
        return PresenceEvent(kind: .exit, id: id, user: presence.user, device: presence.device, beacon: presence.beacon,
                             venue: presence.venue, at: time, entered: presence.entered, reason: reason)
    }

    /// When time alone could next change a decision for this track.
    func deadline(of track: UserTrack) -> Int64 {
        var earliest = timeoutDeadline(of: track)
        if let candidate = track.candidate {
            earliest = min(earliest, TimeBounds.sum(candidate.dwellSince, candidate.dwell))
        }
        if !track.links.isEmpty, let openStep = track.beliefOpenStep, !track.isBeliefQuiet {
            earliest = min(earliest, TimeBounds.sum(openStep * PlaceBelief.step, PlaceBelief.step))
        }
        for evidence in track.evidence where evidence.rate > 0 {
            let remaining = (evidence.threshold - evidence.amount) / evidence.rate * 1000
            earliest = min(earliest, track.evidenceTime + max(1, Int64(remaining.rounded(.up))))
        }
        var oldest = Int64.max
        for link in track.links {
            oldest = min(oldest, link.smoother.lastTime)
        }
        if oldest != .max {
            earliest = min(earliest, oldest + configuration.staleAfter + 1)
            // Held readings end with the hold; any of them may be held while a node is suspect.
            if watchedNodes > 0 {
                for link in track.links where nodes[link.node].map({ $0.heartbeats || $0.offlineSince != nil }) ?? false {
                    earliest = min(earliest, link.smoother.lastTime + configuration.nodeDownHold + 1)
                }
            }
        }
        return earliest
    }

    /// When the session times out (never without one): the absence timeout after the last
    /// qualifying sighting, later while a restart's grace lasts, or while the node that last heard
    /// the user is suspected down (its silence is no evidence that the user left).
    func timeoutDeadline(of track: UserTrack) -> Int64 {
        guard let lastSeen = track.presence?.lastSeen else { return .max }
        let timeout = places.isEmpty ? configuration.absenceTimeout : places.absenceTimeout(at: track.presence?.beacon ?? "", configuration: configuration)
        var deadline = max(TimeBounds.sum(lastSeen, timeout), track.graceUntil ?? .min)
        if watchedNodes > 0, let node = track.presence?.lastNode, let health = nodes[node] {
            let suspectSince = health.offlineSince.map { max($0, lastSeen) } ?? lastSeen
            if health.offlineSince != nil || (health.heartbeats && health.lastHeard < lastSeen + configuration.heartbeatGrace) {
                deadline = max(deadline, suspectSince + configuration.nodeDownHold + 1)
            }
        }
        return deadline
    }
}
