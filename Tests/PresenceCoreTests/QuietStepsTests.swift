import Testing
@testable import PresenceCore

/// The `hmm` decision's cost follows what is heard: a user nobody hears is stepped for at most a
/// window after their last reading, then costs nothing per tick until they are heard again or
/// time out, and the steps that passed meanwhile are caught up at once, as if closed one by one.
@Suite struct QuietStepsTests {
    /// alice heard at booth a every 500 ms from 0 to `heardUntil`, then ticked every 100 ms up to
    /// `end`; her absence timeout is long enough that she stays present throughout.
    private func silence(heardUntil: Int64, end: Int64) -> (drive: Drive, stepsWhenHeard: Int) {
        var drive = Drive {
            $0.decision = .hmm
            $0.absenceTimeout = 600_000
        }
        for time in stride(from: Int64(0), to: heardUntil, by: 500) { drive.hear("a", rssi: -60, at: time) }
        let stepsWhenHeard = drive.engine.statistics.steps
        for time in stride(from: heardUntil, through: end, by: 100) { drive.tick(to: time) }
        return (drive, stepsWhenHeard)
    }

    @Test func aSilentUserCostsNothingPerTick() {
        let short = silence(heardUntil: 10_000, end: 70_000)
        let long = silence(heardUntil: 10_000, end: 310_000)
        #expect(short.drive.summary == ["enter a @0"])
        #expect(long.drive.summary == ["enter a @0"])
        let window = Int(EngineConfiguration().lag / PlaceBelief.step) + 1
        let afterShort = short.drive.engine.statistics.steps - short.stepsWhenHeard
        let afterLong = long.drive.engine.statistics.steps - long.stepsWhenHeard
        #expect(afterShort <= window + 1, "\(afterShort) steps in a minute of silence")
        #expect(afterLong == afterShort, "five minutes of silence cost \(afterLong) steps, one minute \(afterShort)")
    }

    /// alice heard at booth a by one node every 500 ms, at 100 ms into each step, while the engine
    /// is ticked every 100 ms: the look her observation asks for is the one her step's end asks
    /// for anyway, so she is looked at once a step, not twice (about 240 times here); her enter and
    /// her move are still decided.
    @Test func aUserHeardOnceAStepIsLookedAtOnceAStep() {
        var drive = Drive { $0.decision = .hmm }
        var steps = 0
        for step in Int64(0) ..< 120 {
            for time in stride(from: step * 500, to: step * 500 + 500, by: 100) {
                if time % 500 == 100 {
                    drive.hear(step < 60 ? "a" : "b", rssi: -60, at: time)
                } else {
                    drive.tick(to: time)
                }
            }
            steps += 1
        }
        #expect(drive.events.map { "\($0.kind.rawValue) \($0.beacon)" } == ["enter a", "exit a", "enter b"], "\(drive.summary)")
        let looks = drive.engine.statistics.looks
        #expect(looks <= steps + steps / 10, "\(looks) looks in \(steps) steps")
    }

    @Test func aUserHeardAgainAfterSilenceIsCaughtUpAndStillDecided() {
        var drive = Drive {
            $0.decision = .hmm
            $0.absenceTimeout = 600_000
        }
        for time in stride(from: Int64(0), to: 10_000, by: 500) { drive.hear("a", rssi: -60, at: time) }
        for time in stride(from: Int64(10_000), to: 120_000, by: 100) { drive.tick(to: time) }
        for time in stride(from: Int64(120_000), to: 140_000, by: 500) {
            drive.hear("a", rssi: -85, at: time)
            drive.hear("b", rssi: -55, at: time + 1)
        }
        let kinds = drive.events.map { "\($0.kind.rawValue) \($0.beacon)" }
        #expect(kinds == ["enter a", "exit a", "enter b"], "\(drive.summary)")
        guard drive.events.count == 3 else { return }
        #expect(drive.events[1].reason == .moved)
        #expect((120_000 ... 121_000).contains(drive.events[2].at), "the move dated \(drive.events[2].at)")
        #expect(drive.decidedAt[2] - 120_000 <= 4_000, "the move decided \(drive.decidedAt[2] - 120_000) ms after b was first heard")
    }

    @Test(arguments: [Int64(3), 9, 10, 40, 1_000])
    func passingQuietStepsAtOnceMatchesClosingThemOneByOne(count: Int64) {
        let stay = StepModel(EngineConfiguration()).stay
        var belief = PlaceBelief(at: 0, lagSteps: 8)
        let a = belief.claimSlot(for: 1, keep: 0, pastLikelihood: 1, stay: stay)
        let b = belief.claimSlot(for: 2, keep: 0, pastLikelihood: 1, stay: stay)
        var heard = PlaceBelief.Vector(repeating: 1)
        heard[0] = 0.01
        heard[b] = 0.2
        for _ in 0 ..< 12 { belief.close(heard, firstReading: 1, stay: stay) }
        heard[a] = 0.3
        heard[b] = 1
        belief.close(heard, firstReading: 1, stay: stay)
        var oneByOne = belief
        for _ in 0 ..< count { oneByOne.close(PlaceBelief.Vector(repeating: 1), stay: stay) }
        var atOnce = belief
        atOnce.passQuietSteps(to: belief.openStep + count, stay: stay)
        #expect(atOnce.openStep == oneByOne.openStep)
        let difference = atOnce.latest - oneByOne.latest
        #expect((difference * difference).sum() < 1e-8, "\(atOnce.latest) against \(oneByOne.latest)")
        var smoothedAtOnce: [PlaceBelief.Vector] = []
        var smoothedOneByOne: [PlaceBelief.Vector] = []
        atOnce.smooth(stay: stay, into: &smoothedAtOnce)
        oneByOne.smooth(stay: stay, into: &smoothedOneByOne)
        #expect(smoothedAtOnce.count == smoothedOneByOne.count)
        for (x, y) in zip(smoothedAtOnce, smoothedOneByOne) { #expect(((x - y) * (x - y)).sum() < 1e-8) }
    }
}
