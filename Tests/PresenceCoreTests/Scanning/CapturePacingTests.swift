import PresenceCore
import Testing

@Suite struct CapturePacingTests {
    static let started: Int64 = 1_800_000_000_000
    /// Three records captured long before the replay: at 0, 250 and 1,000 ms.
    static let captured: [Int64] = [1_763_774_734_000, 1_763_774_734_250, 1_763_774_735_000]

    @Test(arguments: [
        (CapturePacing.Speed.factor(1), [Int64(0), 250, 1_000]),
        (.factor(2), [0, 125, 500]),
        (.factor(0.5), [0, 500, 2_000]),
    ])
    func atASpeedRecordsAreDueAsCapturedFromTheStartAndDatedWhenDue(_ speed: CapturePacing.Speed, _ offsets: [Int64]) {
        var pacing = CapturePacing(speed: speed, keepTime: false, started: Self.started)
        let timings = Self.captured.map { pacing.timing(capturedAt: $0) }
        #expect(timings == offsets.map { CapturePacing.Timing(due: Self.started + $0, ts: Self.started + $0) })
    }

    @Test func keepTimeDatesSightingsWithTheCapturesClockAndStillPaces() {
        var pacing = CapturePacing(speed: .factor(2), keepTime: true, started: Self.started)
        let timings = Self.captured.map { pacing.timing(capturedAt: $0) }
        #expect(timings.map(\.due) == [Self.started, Self.started + 125, Self.started + 500])
        #expect(timings.map(\.ts) == Self.captured)
    }

    @Test(arguments: [false, true])
    func asFastAsPossibleEveryRecordIsDueAtOnce(keepTime: Bool) {
        var pacing = CapturePacing(speed: .asFastAsPossible, keepTime: keepTime, started: Self.started)
        let timings = Self.captured.map { pacing.timing(capturedAt: $0) }
        #expect(timings.allSatisfy { $0.due == nil })
        #expect(timings.map(\.ts) == (keepTime ? Self.captured : [nil, nil, nil]))
    }
}
