/// Everything measured for one method in one scenario, summed over runs and users. Durations and
/// latencies are ms; the report legend defines each figure.
struct Tally: Sendable, Equatable {
    /// Time the truth names a beacon, and the part of it the method names the same beacon, on
    /// the history and on the live timeline.
    var presentTime: Int64 = 0
    var rightTime: Int64 = 0
    var liveRightTime: Int64 = 0
    /// Time the truth says nowhere, and the part of it the method names some beacon (history, live).
    var absentTime: Int64 = 0
    var falseTime: Int64 = 0
    var liveFalseTime: Int64 = 0
    /// Enters the method made (moves included), and those the truth makes.
    var transitions = 0
    var trueTransitions = 0
    /// Returns to a beacon within 30 s of leaving it for another one (A→B→A).
    var flaps = 0
    /// Users × scored span.
    var deviceTime: Int64 = 0
    /// True stays at a beacon, and those of them that end with a true exit.
    var dwells = 0
    var exits = 0
    var enterLatencies: [Int64] = []
    var exitLatencies: [Int64] = []
    var missedEnters = 0
    var missedExits = 0
    /// Enters that are not the first enter of a true stay at that beacon, and those of them made
    /// while the truth says nowhere (a booth passed on the way to another).
    var spurious = 0
    var spuriousWhileAbsent = 0
    /// Present time the history does not name the true beacon, by where in its true stay it falls:
    /// stays never named at all, before the first moment one is named, after the last, and between.
    var lost = LostTime()
    /// Enters from nowhere on the history timeline that the nearest-place truth can judge, and
    /// those of them that name the place nearest the person at the enter's time.
    var firstEnters = 0
    var firstEntersNearest = 0
    /// Sessions on the history timeline that last the visit's minimum dwell (`Scorer.visitDwell`),
    /// and the true stays that do.
    var visits = 0
    var trueVisits = 0

    var firstEnterAccuracy: Double? { firstEnters > 0 ? Double(firstEntersNearest) / Double(firstEnters) : nil }

    var accuracy: Double? { presentTime > 0 ? Double(rightTime) / Double(presentTime) : nil }
    var liveAccuracy: Double? { presentTime > 0 ? Double(liveRightTime) / Double(presentTime) : nil }
    var falsePresence: Double? { absentTime > 0 ? Double(falseTime) / Double(absentTime) : nil }
    var liveFalsePresence: Double? { absentTime > 0 ? Double(liveFalseTime) / Double(absentTime) : nil }
    var flapsPerDeviceHour: Double? { deviceTime > 0 ? Double(flaps) / (Double(deviceTime) / 3_600_000) : nil }

    mutating func merge(_ other: Tally) {
        presentTime += other.presentTime
        rightTime += other.rightTime
        liveRightTime += other.liveRightTime
        absentTime += other.absentTime
        falseTime += other.falseTime
        liveFalseTime += other.liveFalseTime
        transitions += other.transitions
        trueTransitions += other.trueTransitions
        flaps += other.flaps
        deviceTime += other.deviceTime
        dwells += other.dwells
        exits += other.exits
        enterLatencies += other.enterLatencies
        exitLatencies += other.exitLatencies
        missedEnters += other.missedEnters
        missedExits += other.missedExits
        spurious += other.spurious
        spuriousWhileAbsent += other.spuriousWhileAbsent
        lost.merge(other.lost)
        firstEnters += other.firstEnters
        firstEntersNearest += other.firstEntersNearest
        visits += other.visits
        trueVisits += other.trueVisits
    }
}

/// Where in the true stays the present time a method loses falls (ms); the four add up to the
/// present time minus the right time on the history timeline.
struct LostTime: Sendable, Equatable {
    var missed: Int64 = 0
    var late: Int64 = 0
    var early: Int64 = 0
    var gaps: Int64 = 0

    var total: Int64 { missed + late + early + gaps }

    mutating func merge(_ other: LostTime) {
        missed += other.missed
        late += other.late
        early += other.early
        gaps += other.gaps
    }
}

/// Nearest-rank percentile of latencies in ms, as seconds: the smallest value with at least `p`
/// of the values at or below it.
func percentile(_ values: [Int64], _ p: Double) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    let rank = max(1, Int((p * Double(sorted.count)).rounded(.up)))
    return Double(sorted[min(rank, sorted.count) - 1]) / 1000
}
