/// Scores one user's decisions in one run against the truth, over the run's span `start ..< end`.
/// Time shares are measured on both timelines (history: sessions as stored; live: when a
/// subscriber learns of each change); transitions, flaps, latencies, missed and spurious enters
/// on the live one.
enum Scorer {
    /// An enter at most this long before a true stay starts counts as that stay's enter (with a
    /// negative latency): someone walking up to a booth may be placed there a little early.
    static let earlyEnter: Int64 = 5_000
    /// A return to a beacon within this long after leaving it for another one is a flap.
    static let flapWindow: Int64 = 30_000

    /// A session counts as a visit from this long (the analysts' visit counts, with
    /// `presence.settings.visit_min_dwell` set as an expo would).
    static let visitDwell: Int64 = 15_000

    /// `nearest`: the place nearest the person at each moment, where known (else the truth judges
    /// first enters).
    static func score(truth: StepTimeline<TruthState>, nearest: StepTimeline<TruthState>? = nil, output: MethodOutput, user: String,
                      start: Int64, end: Int64) -> Tally {
        let nowhere = StepTimeline<String?>(initial: nil)
        let history = output.history[user] ?? nowhere
        let live = output.live[user] ?? nowhere
        let truthSegments = truth.segments(from: start, to: end)
        var tally = Tally()
        tally.deviceTime = end - start
        let historyShares = shares(truthSegments, history.segments(from: start, to: end))
        let liveShares = shares(truthSegments, live.segments(from: start, to: end))
        tally.presentTime = historyShares.present
        tally.absentTime = historyShares.absent
        tally.rightTime = historyShares.right
        tally.falseTime = historyShares.claimed
        tally.liveRightTime = liveShares.right
        tally.liveFalseTime = liveShares.claimed
        tally.lost = lost(truthSegments, history.segments(from: start, to: end))
        tally.trueTransitions = truth.changes.count { $0.time >= start && $0.time < end && $0.value.beacon != nil }
        let enters = live.changes.filter { $0.time >= start && $0.time < end && $0.value != nil }
        tally.transitions = enters.count
        tally.flaps = flaps(live.segments(from: start, to: end))
        let matched = stays(truthSegments, truth: truth, live: live.segments(from: start - earlyEnter, to: output.horizon),
                            horizon: output.horizon, end: end, into: &tally)
        let spurious = enters.filter { !matched.contains($0.time) }
        tally.spurious = spurious.count
        tally.spuriousWhileAbsent = spurious.count { truth.value(at: $0.time) == .nowhere }
        firstEnters(history, judge: nearest ?? truth, start: start, end: end, into: &tally)
        tally.visits = history.segments(from: start, to: end).count { $0.value != nil && $0.end - $0.start >= visitDwell }
        tally.trueVisits = truthSegments.count { $0.value.beacon != nil && $0.end - $0.start >= visitDwell }
        return tally
    }

    /// Every enter from nowhere on the history timeline, judged by the place `judge` names at
    /// its time (left out where it names none).
    private static func firstEnters(_ history: StepTimeline<String?>, judge: StepTimeline<TruthState>, start: Int64, end: Int64,
                                    into tally: inout Tally) {
        var previous = history.value(at: start - 1)
        for change in history.changes where change.time >= start && change.time < end {
            defer { previous = change.value }
            guard previous == nil, let beacon = change.value, let nearest = judge.value(at: change.time).beacon else { continue }
            tally.firstEnters += 1
            if nearest == beacon { tally.firstEntersNearest += 1 }
        }
    }

    /// Accuracy and false presence: the truth's and the method's stretches walked side by side.
    private static func shares(_ truth: [StepTimeline<TruthState>.Segment],
                               _ method: [StepTimeline<String?>.Segment]) -> (present: Int64, right: Int64, absent: Int64, claimed: Int64) {
        var tally = (present: Int64(0), right: Int64(0), absent: Int64(0), claimed: Int64(0))
        var i = 0
        var j = 0
        while i < truth.count, j < method.count {
            let overlap = min(truth[i].end, method[j].end) - max(truth[i].start, method[j].start)
            if overlap > 0 {
                switch truth[i].value {
                case .at(let beacon):
                    tally.present += overlap
                    if method[j].value == beacon { tally.right += overlap }
                case .nowhere:
                    tally.absent += overlap
                    if method[j].value != nil { tally.claimed += overlap }
                case .unknown:
                    break
                }
            }
            if truth[i].end <= method[j].end { i += 1 } else { j += 1 }
        }
        return tally
    }

    /// The present time `method` does not name the true beacon, stay by stay: a stay it never
    /// names is missed whole; otherwise what precedes its first moment there is late, what
    /// follows its last is early, and the rest is gaps. Both timelines are in time order.
    private static func lost(_ truth: [StepTimeline<TruthState>.Segment], _ method: [StepTimeline<String?>.Segment]) -> LostTime {
        var lost = LostTime()
        var next = 0
        for stay in truth {
            guard let beacon = stay.value.beacon else { continue }
            while next < method.count, method[next].end <= stay.start { next += 1 }
            var first: Int64?
            var last: Int64 = 0
            var right: Int64 = 0
            for segment in method[next...] {
                guard segment.start < stay.end else { break }
                guard segment.value == beacon else { continue }
                let from = max(segment.start, stay.start)
                last = min(segment.end, stay.end)
                first = first ?? from
                right += last - from
            }
            guard let first else {
                lost.missed += stay.end - stay.start
                continue
            }
            lost.late += first - stay.start
            lost.early += stay.end - last
            lost.gaps += last - first - right
        }
        return lost
    }

    /// A→B→A returns within `flapWindow`; a stay interrupted by nowhere (A→nowhere→A) is one stay.
    private static func flaps(_ segments: [StepTimeline<String?>.Segment]) -> Int {
        var stays: [StepTimeline<String?>.Segment] = []
        for segment in segments where segment.value != nil {
            if let last = stays.last, last.value == segment.value {
                stays[stays.count - 1].end = segment.end
            } else {
                stays.append(segment)
            }
        }
        guard stays.count >= 3 else { return 0 }
        return (2 ..< stays.count).count { index in
            stays[index].value == stays[index - 2].value && stays[index].start - stays[index - 2].end <= flapWindow
        }
    }

    /// Enter and exit latencies of every true stay; returns the times of the live enters that
    /// were a stay's first enter (every other enter is spurious).
    private static func stays(_ truthSegments: [StepTimeline<TruthState>.Segment], truth: StepTimeline<TruthState>,
                              live: [StepTimeline<String?>.Segment], horizon: Int64, end: Int64, into tally: inout Tally) -> Set<Int64> {
        var matched: Set<Int64> = []
        for (index, stay) in truthSegments.enumerated() {
            guard let beacon = stay.value.beacon else { continue }
            tally.dwells += 1
            let windowStart = stay.start - earlyEnter
            guard let first = live.firstIndex(where: { $0.value == beacon && $0.end > windowStart && $0.start < stay.end }) else {
                tally.missedEnters += 1
                continue
            }
            let entered = live[first].start
            if entered <= windowStart {
                tally.enterLatencies.append(0)
            } else {
                tally.enterLatencies.append(entered - stay.start)
                matched.insert(entered)
            }
            guard stay.end < end, truth.value(at: stay.end) != .unknown else { continue }
            tally.exits += 1
            let nextStay = truthSegments[(index + 1)...].first { $0.value == stay.value }?.start ?? .max
            let last = live[first...].last { $0.value == beacon && $0.start < stay.end } ?? live[first]
            if last.end >= min(horizon, nextStay) {
                tally.missedExits += 1
            } else {
                tally.exitLatencies.append(last.end - stay.end)
            }
        }
        return matched
    }
}
