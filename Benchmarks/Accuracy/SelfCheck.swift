import PresenceCore

/// The benchmark's checks of its own logic, run every time before anything is scored: the metric
/// arithmetic on hand-made timelines, and each baseline on a clean two-beacon walk where its
/// answer is known. The truth row of every scenario is checked as it is scored (`truthFailures`).
/// Each check returns what went wrong; empty means it passed.
enum SelfCheck {
    /// Failures of the hand-made checks, and how many checks ran.
    static func run() -> (failures: [String], count: Int) {
        let checks: [(String, () -> [String])] = [
            ("a 2 s late copy of the truth", lateCopy),
            ("an A→B→A→B flapper", flapper),
            ("a stay held into a walk", heldIntoWalk),
            ("a method that never moves", neverMoves),
            ("a method that leaves each stay early", leavesEarly),
            ("a first enter at the wrong place", wrongFirstEnter),
            ("baselines on a clean two-beacon walk", baselinesOnCleanWalk),
        ]
        var failures: [String] = []
        for (name, check) in checks {
            failures += check().map { "\(name): \($0)" }
        }
        return (failures, checks.count)
    }

    /// What is wrong with the truth's own row: it must be perfect.
    static func truthFailures(_ tally: Tally, scenario: String) -> [String] {
        var failures: [String] = []
        if let accuracy = tally.accuracy, accuracy != 1 { failures.append("accuracy \(accuracy)") }
        if let falsePresence = tally.falsePresence, falsePresence != 0 { failures.append("false presence \(falsePresence)") }
        if tally.transitions != tally.trueTransitions { failures.append("\(tally.transitions) transitions for \(tally.trueTransitions)") }
        if !(tally.enterLatencies + tally.exitLatencies).allSatisfy({ $0 == 0 }) { failures.append("latencies not all 0") }
        if tally.missedEnters + tally.missedExits + tally.spurious != 0 { failures.append("missed or spurious enters") }
        if tally.lost != LostTime() { failures.append("lost time \(tally.lost)") }
        if tally.enterLatencies.count != tally.dwells || tally.exitLatencies.count != tally.exits { failures.append("stays not all measured") }
        return failures.map { "truth scored against itself in \(scenario): \($0)" }
    }

    /// The lost time's four parts must add up to the present time the history does not name right.
    static func lostTimeFailures(_ tally: Tally, scenario: String, method: String) -> [String] {
        guard tally.lost.total != tally.presentTime - tally.rightTime else { return [] }
        return ["\(method) in \(scenario): lost time \(tally.lost) adds up to \(tally.lost.total) ms, not the "
                + "\(tally.presentTime - tally.rightTime) ms of present time named wrong"]
    }

    // MARK: Metric arithmetic

    /// Truth: a for 60 s, then b for 60 s.
    private static func twoStays() -> StepTimeline<TruthState> {
        timeline(TruthState.unknown, [(0, .at("a")), (60_000, .at("b")), (120_000, .unknown)])
    }

    /// Truth: a for 30 s, walking 10 s, b for 60 s.
    private static func walkBetweenStays() -> StepTimeline<TruthState> {
        timeline(TruthState.unknown, [(0, .at("a")), (30_000, .nowhere), (40_000, .at("b")), (100_000, .unknown)])
    }

    private static func lateCopy() -> [String] {
        let tally = score(twoStays(), method: [(2_000, "a"), (62_000, "b")], end: 120_000)
        var expected = Tally(presentTime: 120_000, rightTime: 116_000, liveRightTime: 116_000, transitions: 2, trueTransitions: 2, deviceTime: 120_000,
                             dwells: 2, exits: 1)
        expected.enterLatencies = [2_000, 2_000]
        expected.exitLatencies = [2_000]
        expected.lost.late = 4_000
        (expected.firstEnters, expected.firstEntersNearest, expected.visits, expected.trueVisits) = (1, 1, 2, 2)
        return compare(tally, expected)
    }

    private static func flapper() -> [String] {
        let tally = score(twoStays(), method: [(0, "a"), (30_000, "b"), (40_000, "a"), (60_000, "b")], end: 120_000)
        var expected = Tally(presentTime: 120_000, rightTime: 110_000, liveRightTime: 110_000, transitions: 4, trueTransitions: 2, flaps: 2, deviceTime: 120_000,
                             dwells: 2, exits: 1, spurious: 2)
        expected.enterLatencies = [0, 0]
        expected.exitLatencies = [0]
        expected.lost.gaps = 10_000
        // The 10 s back at b is no visit.
        (expected.firstEnters, expected.firstEntersNearest, expected.visits, expected.trueVisits) = (1, 1, 3, 2)
        return compare(tally, expected)
    }

    /// The method holds a 5 s into the walk and enters b 1 s late.
    private static func heldIntoWalk() -> [String] {
        let truth = walkBetweenStays()
        let tally = score(truth, method: [(0, "a"), (35_000, nil), (41_000, "b")], end: 100_000)
        var expected = Tally(presentTime: 90_000, rightTime: 89_000, liveRightTime: 89_000, absentTime: 10_000, falseTime: 5_000, liveFalseTime: 5_000, transitions: 2, trueTransitions: 2,
                             deviceTime: 100_000, dwells: 2, exits: 1)
        expected.enterLatencies = [0, 1_000]
        expected.exitLatencies = [5_000]
        expected.lost.late = 1_000
        (expected.firstEnters, expected.firstEntersNearest, expected.visits, expected.trueVisits) = (2, 2, 2, 2)
        return compare(tally, expected)
    }

    /// The method sits at a for ever: b is missed, and so is a's exit.
    private static func neverMoves() -> [String] {
        let truth = walkBetweenStays()
        let tally = score(truth, method: [(0, "a")], end: 100_000)
        var expected = Tally(presentTime: 90_000, rightTime: 30_000, liveRightTime: 30_000, absentTime: 10_000, falseTime: 10_000, liveFalseTime: 10_000, transitions: 1, trueTransitions: 2,
                             deviceTime: 100_000, dwells: 2, exits: 1, missedEnters: 1, missedExits: 1)
        expected.enterLatencies = [0]
        expected.lost.missed = 60_000
        (expected.firstEnters, expected.firstEntersNearest, expected.visits, expected.trueVisits) = (1, 1, 1, 2)
        return compare(tally, expected)
    }

    /// The method enters b while the person is at a, then moves to a 12 s later: the first
    /// enter names the wrong place, and the 12 s at b are no visit.
    private static func wrongFirstEnter() -> [String] {
        let tally = score(twoStays(), method: [(0, "b"), (12_000, "a"), (60_000, "b")], end: 120_000)
        var expected = Tally(presentTime: 120_000, rightTime: 108_000, liveRightTime: 108_000, transitions: 3, trueTransitions: 2, deviceTime: 120_000,
                             dwells: 2, exits: 1, spurious: 1)
        expected.enterLatencies = [0, 12_000]
        expected.exitLatencies = [0]
        expected.lost.late = 12_000
        (expected.firstEnters, expected.firstEntersNearest, expected.visits, expected.trueVisits) = (1, 0, 2, 2)
        return compare(tally, expected)
    }

    /// The method leaves a 10 s before b begins and b 10 s before the recording ends.
    private static func leavesEarly() -> [String] {
        let tally = score(twoStays(), method: [(0, "a"), (50_000, nil), (60_000, "b"), (110_000, nil)], end: 120_000)
        var expected = Tally(presentTime: 120_000, rightTime: 100_000, liveRightTime: 100_000, transitions: 2, trueTransitions: 2, deviceTime: 120_000,
                             dwells: 2, exits: 1)
        expected.enterLatencies = [0, 0]
        expected.exitLatencies = [-10_000]
        expected.lost.early = 20_000
        (expected.firstEnters, expected.firstEntersNearest, expected.visits, expected.trueVisits) = (2, 2, 2, 2)
        return compare(tally, expected)
    }

    // MARK: Baselines

    /// Two nodes each hear the user every second, -50 dBm near and -80 dBm far: at a for 60 s,
    /// then at b for 60 s. Each baseline must follow with its own known delay and no noise.
    private static func baselinesOnCleanWalk() -> [String] {
        var observations: [Observation] = []
        for second in 0 ..< 120 {
            let time = Int64(second) * 1_000
            for beacon in ["a", "b"] {
                let near = (beacon == "a") == (second < 60)
                observations.append(Observation(time: time, user: "walker", device: "tag", beacon: beacon, venue: nil,
                                                node: "node-\(beacon)", rssi: near ? -50 : -80, tx: -59))
            }
        }
        let run = BenchRun(name: "clean walk", observations: observations, truth: ["walker": twoStays()], start: 0, end: 120_000)
        let bounds: [(method: any PresenceMethod, latency: Int64, accuracy: Double)] = [
            (BaselineMethod<StrongestBaseline>(), 2_000, 0.95),
            (BaselineMethod<MeanMarginBaseline>(), 8_000, 0.9),
            (BaselineMethod<HappyBubblesBaseline>(), 20_000, 0.75),
        ]
        var failures: [String] = []
        for (method, latency, accuracy) in bounds {
            let tally = Scorer.score(truth: twoStays(), output: method.run(run), user: "walker", start: 0, end: 120_000)
            let latencies = tally.enterLatencies + tally.exitLatencies
            if tally.transitions != 2 || tally.flaps != 0 || tally.spurious != 0 || tally.missedEnters + tally.missedExits != 0 {
                failures.append("\(method.name): \(tally.transitions) transitions, \(tally.flaps) flaps, \(tally.spurious) spurious, "
                                + "\(tally.missedEnters + tally.missedExits) missed; expected 2, 0, 0, 0")
            }
            if latencies.count != 3 || !latencies.allSatisfy({ $0 >= 0 && $0 <= latency }) {
                failures.append("\(method.name): latencies \(latencies) ms, expected three within 0…\(latency)")
            }
            if (tally.accuracy ?? 0) < accuracy { failures.append("\(method.name): accuracy \(tally.accuracy ?? 0), expected \(accuracy) or more") }
        }
        // Mean-margin's move is known 3 s after b's mean passes a's (its hold); the history dates
        // it back to that moment, as the engine dates its moves.
        let meanMargin = Scorer.score(truth: twoStays(), output: BaselineMethod<MeanMarginBaseline>().run(run), user: "walker", start: 0, end: 120_000)
        if (meanMargin.accuracy ?? 0) - (meanMargin.liveAccuracy ?? 0) < 2_500.0 / 120_000 {
            failures.append("mean-margin: history accuracy \(meanMargin.accuracy ?? 0) not ahead of live \(meanMargin.liveAccuracy ?? 0) by the 3 s hold")
        }
        return failures
    }

    // MARK: Helpers

    private static func timeline<Value>(_ initial: Value, _ changes: [(Int64, Value)]) -> StepTimeline<Value> {
        var timeline = StepTimeline(initial: initial)
        for (time, value) in changes { timeline.set(value, at: time) }
        return timeline
    }

    /// Scores a method whose history and live timelines are both `method`, run to 200 s.
    private static func score(_ truth: StepTimeline<TruthState>, method: [(Int64, String?)], end: Int64) -> Tally {
        var output = MethodOutput(horizon: 200_000)
        for (time, beacon) in method { output.record(user: "u", beacon: beacon, history: time, live: time) }
        return Scorer.score(truth: truth, output: output, user: "u", start: 0, end: end)
    }

    private static func compare(_ tally: Tally, _ expected: Tally) -> [String] {
        var sorted = tally
        sorted.enterLatencies.sort()
        sorted.exitLatencies.sort()
        return sorted == expected ? [] : ["got \(sorted), expected \(expected)"]
    }
}
