extension PresenceEngine {
    /// The `evidence` decision for a present user: adds up each challenger's lead beyond the
    /// margin since the last look (at the rates that look set), moves the user to the strongest
    /// case once it reaches the switch evidence, and sets the rates the readings give now.
    ///
    /// A challenger's lead is how much nearer (dB of path loss) its best fresh reading is than the
    /// user's beacon (fresh or held readings; not heard at all counts as `evidenceCap` behind),
    /// at most `evidenceCap`, minus the margin. Evidence only grows while the lead is positive and
    /// shrinks while it is negative, never below zero; a case that falls to zero is dropped and
    /// starts again from the moment its lead turns positive. The move is dated as under the `dwell`
    /// decision (`moveDate`).
    func weighEvidence(_ track: inout UserTrack, _ presence: Presence, at time: Int64, events: inout [PresenceEvent]) {
        let elapsed = Double(max(0, time - track.evidenceTime)) / 1000
        track.evidenceTime = time
        var winner: Int?
        for index in track.evidence.indices {
            track.evidence[index].amount += track.evidence[index].rate * elapsed
            if track.evidence[index].amount >= track.evidence[index].threshold,
               winner.map({ stronger(track.evidence[index], than: track.evidence[$0]) }) ?? true {
                winner = index
            }
        }
        let scores = beaconScores(track.links, here: presence.beacon, at: time)
        if let winner, let score = scores.first(where: { $0.beacon == track.evidence[winner].beacon }) {
            let evidence = track.evidence[winner]
            let at = moveDate(track, to: evidence.beacon, leadingSince: evidence.since, from: presence)
            events.append(exitEvent(presence, at: at, reason: .moved))
            enter(&track, score, at: at, events: &events)
            return
        }
        let current = scores.first { $0.beacon == presence.beacon }?.pathLoss ?? .infinity
        var cases: [Evidence] = []
        for score in scores where score.beacon != presence.beacon {
            let (margin, threshold) = evidenceRule(from: presence.beacon, to: score.beacon)
            let rate = min(current - score.pathLoss, configuration.evidenceCap) - margin
            if let index = track.evidence.firstIndex(where: { $0.beacon == score.beacon }), track.evidence[index].amount > 0 {
                var evidence = track.evidence[index]
                evidence.rate = rate
                cases.append(evidence)
            } else if rate > 0 {
                cases.append(Evidence(beacon: score.beacon, amount: 0, since: time, rate: rate, threshold: threshold))
            }
        }
        track.evidence = cases
    }

    /// The margin and the switch evidence of a move from `here` to `other`: the configured ones,
    /// or, with beacon policies, the move's margin and the evidence scaled by its dwell over the
    /// configured dwell (a beacon that asks for twice the dwell asks for twice the evidence).
    private func evidenceRule(from here: String, to other: String) -> (margin: Double, threshold: Double) {
        guard !places.isEmpty else { return (configuration.switchMargin, configuration.switchEvidence) }
        let rule = places.moveRule(from: here, to: other, configuration: configuration)
        let scale = configuration.switchDwell > 0 ? Double(rule.dwell) / Double(configuration.switchDwell) : 1
        return (rule.margin, configuration.switchEvidence * max(scale, 0.01))
    }

    /// The larger amount wins; ties go to the smaller beacon key.
    private func stronger(_ evidence: Evidence, than other: Evidence) -> Bool {
        evidence.amount != other.amount ? evidence.amount > other.amount : evidence.beacon < other.beacon
    }

    /// Each beacon's nearest reading that counts (`forEachReading`), sorted by beacon key; ties
    /// as in `nearest`.
    func beaconScores(_ links: [Link], here: String, at time: Int64) -> [Score] {
        var scores: [Score] = []
        scores.reserveCapacity(links.count)
        forEachReading(links, here: here, at: time) { links, index, pathLoss in
            if let existing = scores.firstIndex(where: { $0.beacon == links[index].beacon }) {
                if nearer(pathLoss, index, than: scores[existing], in: links) {
                    scores[existing] = Score(beacon: links[index].beacon, pathLoss: pathLoss, link: index)
                }
            } else {
                scores.append(Score(beacon: links[index].beacon, pathLoss: pathLoss, link: index))
            }
        }
        scores.sort { $0.beacon < $1.beacon }
        return scores
    }

    /// The nearest reading of `here` itself that counts, as `beaconScores` gives it, without
    /// scoring and sorting every other beacon: what a present user's ranging needs.
    func nearestReading(of here: String, in links: [Link], at time: Int64) -> Score? {
        var best: Score?
        forEachReading(links, here: here, at: time) { links, index, pathLoss in
            guard links[index].beacon == here, nearer(pathLoss, index, than: best, in: links) else { return }
            best = Score(beacon: links[index].beacon, pathLoss: pathLoss, link: index)
        }
        return best
    }
}
