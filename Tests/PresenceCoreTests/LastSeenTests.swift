import Testing
@testable import PresenceCore

/// What the aggregator saves of a present user's last sighting (`takeLastSeen`, called once a
/// progress interval with the `touches` of the call before): while the user is heard, once it
/// moved by the resolution; once they are no longer heard, exactly, since it dates their exit,
/// after a restart too.
@Suite struct LastSeenTests {
    @Test func whileHeardItIsSavedAtTheResolutionAndOnceQuietExactly() throws {
        var drive = Drive { $0.decision = .hmm }
        var mark: UInt64 = 0
        var saved: [[Int64]] = []
        func take(at time: Int64) {
            drive.tick(to: time)
            saved.append(drive.engine.takeLastSeen(touchedAfter: mark, resolution: 5_000).map(\.time))
            mark = drive.engine.touches
        }
        for time in stride(from: Int64(0), through: 7_500, by: 500) {
            drive.hear("a", rssi: -60, at: time)
            if time % 1_000 == 0, time >= 3_000 { take(at: time) }
        }
        take(at: 8_000)
        take(at: 9_000)
        take(at: 10_000)
        #expect(drive.summary == ["enter a @0"])
        #expect(saved == [[3_000], [], [], [], [], [], [7_500], []],
                "saved \(saved): the first sighting after the enter, none while heard within 5 s, then the last one once quiet")
    }
}
