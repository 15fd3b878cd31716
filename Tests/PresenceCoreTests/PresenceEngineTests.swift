import Testing
@testable import PresenceCore

@Suite struct PresenceEngineTests {
    @Test func aLinkDescribedAnewIsTheSameReadingWithTheNewDescription() {
        var d = Drive()
        for t in stride(from: Int64(1_000), through: 4_000, by: 1_000) {
            d.hear("a", rssi: -75, at: t)
        }
        #expect(d.summary == ["enter a @1000"])
        // A registry reload gives beacon a a radius of 3 m; at 16 dB of path loss the tag is about 6 m away.
        for t in stride(from: Int64(5_000), through: 30_000, by: 1_000) {
            d.hear("a", rssi: -75, at: t, radius: 3)
        }
        #expect(d.engine.tracks.first?.links.count == 1, "one reading per (device, node, beacon), however often it is described")
        #expect(d.summary == ["enter a @1000", "exit a timeout @4000"], "the new radius applies: later sightings do not qualify")
    }

    @Test func aLinkSeenAgainAfterItsUsersSlotWentToAnotherUserFindsItsOwnUser() {
        var d = Drive()
        let alice = ObservedLink(user: "alice", device: "tag-1", beacon: "a", venue: "expo", node: "node-a")
        let bob = ObservedLink(user: "bob", device: "tag-2", beacon: "b", venue: "expo", node: "node-b")
        for t in stride(from: Int64(0), through: 3_000, by: 1_000) {
            d.hear(alice, rssi: -60, at: t)
        }
        d.tick(to: 60_000)
        #expect(d.engine.tracks.count == 1 && d.engine.tracks[0].isFree, "alice went idle and freed her slot")
        for t in stride(from: Int64(61_000), through: 64_000, by: 1_000) {
            d.hear(bob, rssi: -60, at: t)
        }
        #expect(d.engine.tracks.count == 1, "bob took the slot alice's link was last found in")
        for t in stride(from: Int64(65_000), through: 68_000, by: 1_000) {
            d.hear(alice, rssi: -60, at: t)
        }
        #expect(d.events.map { "\($0.user) \($0.kind.rawValue) \($0.beacon) @\($0.at)" } == [
            "alice enter a @0", "alice exit a @3000", "bob enter b @61000", "alice enter a @65000",
        ])
        #expect(d.engine.presence(of: "bob")?.beacon == "b" && d.engine.presence(of: "alice")?.beacon == "a")
    }

    /// Under the `dwell` decision, whose move dating (when the beacon became the nearer) can
    /// follow the new beacon's last sighting.
    @Test func anExitIsNeverDatedBeforeItsEnter() {
        var d = Drive {
            $0.decision = .dwell
            $0.smoothing.method = .exponential
            $0.smoothing.timeConstant = 0
        }
        for t in stride(from: Int64(0), through: 10_000, by: 1_000) {
            d.hear("a", rssi: -60, at: t)
        }
        d.hear("b", rssi: -61, at: 10_500)
        // a fades at 11 s, so b (last heard at 10.5 s) is nearer from 11 s on: the move is dated 11 s.
        d.hear("a", rssi: -75, at: 11_000)
        for t in stride(from: Int64(11_100), through: 60_000, by: 100) {
            d.tick(to: t)
        }
        #expect(d.summary == ["enter a @0", "exit a moved @11000", "enter b @11000", "exit b timeout @11000"],
                "the timeout exit is dated to b's last sighting (10.5 s) but not before b's enter")
        for (enter, exit) in zip(d.events.filter { $0.kind == .enter }, d.events.filter { $0.kind == .exit }) {
            #expect(exit.at >= enter.at)
        }
    }

    @Test func entersWithinTheEnterDwellOfSteadyReception() {
        var d = Drive()
        for t in stride(from: Int64(10_000), through: 13_000, by: 1_000) {
            d.hear("a", rssi: -60, at: t)
        }
        #expect(d.summary == ["enter a @10000"], "decided at the second sighting, dated to the first")
        let enter = d.events[0]
        #expect(enter.user == "alice" && enter.device == "tag-1" && enter.venue == "expo")
        #expect(enter.rssi == -60)
        #expect(abs((enter.distance ?? 0) - 1.122) < 0.01)
        #expect(enter.proximity == .near)
        #expect(enter.id == EventID.make(kind: .enter, user: "alice", device: "tag-1", beacon: "a", at: 10_000, entered: nil))
    }

    @Test func oneStraySightingEntersNothing() {
        var d = Drive()
        d.hear("a", rssi: -60, at: 10_000)
        d.tick(to: 60_000)
        #expect(d.events.isEmpty)
    }

    @Test func picksTheNearestOfSeveralBeaconsAtEnter() {
        var d = Drive()
        for t in stride(from: Int64(0), through: 2_000, by: 500) {
            d.hear("a", rssi: -75, at: t)
            d.hear("b", rssi: -62, at: t + 10)
        }
        #expect(d.events.first?.kind == .enter && d.events.first?.beacon == "b")
        #expect(d.events.first.map { $0.at >= 0 && $0.at <= 10 } == true, "dated to when b was first heard (to the half-second step)")
    }

    @Test func aClearMoveIsReportedWithinSixSecondsAsExitThenEnterAtOneInstant() {
        var d = Drive()
        for t in stride(from: Int64(0), to: 30_000, by: 1_000) {
            let atA = t < 10_000
            d.hear("a", rssi: atA ? -58 : -68, at: t)
            d.hear("b", rssi: atA ? -68 : -58, at: t + 1)
        }
        #expect(d.summary.count == 3)
        #expect(d.summary[0] == "enter a @0")
        let exit = d.events[1], enter = d.events[2]
        #expect(exit.kind == .exit && exit.beacon == "a" && exit.reason == .moved && exit.entered == 0)
        #expect(enter.kind == .enter && enter.beacon == "b")
        #expect(exit.at == enter.at)
        #expect(enter.at - 10_000 <= 6_000, "move reported \(enter.at - 10_000) ms after it happened")
        #expect(exit.dwell == Double(exit.at) / 1000)
    }

    @Test func aClearMoveIsReportedWithinSixSecondsWhenTwoBeaconsTakeTurnsBeingNearest() {
        var d = Drive()
        for t in stride(from: Int64(0), to: 10_000, by: 500) {
            d.hear("a", rssi: -60, at: t)
        }
        // From 10 s on, b and c are both 8 dB or more nearer than a; c drifts ±2 dB around b
        // every second, so the nearest other beacon keeps changing.
        for (step, t) in stride(from: Int64(10_000), to: 40_000, by: 500).enumerated() {
            d.hear("a", rssi: -70, at: t)
            d.hear("b", rssi: -60, at: t + 1)
            d.hear("c", rssi: step / 2 % 2 == 0 ? -58 : -62, at: t + 2)
        }
        #expect(d.events.count == 3)
        guard d.events.count == 3 else { return }
        let exit = d.events[1], enter = d.events[2]
        #expect(exit.kind == .exit && exit.beacon == "a" && exit.reason == .moved)
        #expect(enter.kind == .enter && ["b", "c"].contains(enter.beacon) && enter.at == exit.at)
        #expect(d.decidedAt[1] - 10_000 <= 6_000, "move published \(d.decidedAt[1] - 10_000) ms after it happened")
    }

    @Test(arguments: [2.0, 4.0, 6.0])
    func someoneWhoStopsBetweenTwoBeaconsLeavesTheFarOneWithinSixSeconds(noise: Double) {
        // b and c are equally near (15 dB nearer than a), each reading with `noise` dB of spread:
        // which of them is nearest keeps changing, and neither may hold the user at a.
        var delays: [Int64] = []
        for seed in UInt64(1) ... 40 {
            var random = RandomSource(seed: seed, labels: "between two beacons")
            var d = Drive()
            for t in stride(from: Int64(0), to: 10_000, by: 500) {
                d.hear("a", rssi: -60 + noise * random.gaussian(), at: t)
            }
            var t: Int64 = 10_000
            while d.events.count < 2, t < 60_000 {
                d.hear("a", rssi: -75 + noise * random.gaussian(), at: t)
                d.hear("b", rssi: -60 + noise * random.gaussian(), at: t + 1)
                d.hear("c", rssi: -60 + noise * random.gaussian(), at: t + 2)
                t += 500
            }
            delays.append(d.events.count >= 2 && d.events[1].reason == .moved ? d.decidedAt[1] - 10_000 : .max)
        }
        #expect(delays.allSatisfy { $0 <= 6_000 }, "moves published after \(delays.sorted()) ms")
    }

    @Test func noMoveWhenTheOtherBeaconIsLessThanTheMarginNearer() {
        var d = Drive()
        for t in stride(from: Int64(0), to: 120_000, by: 1_000) {
            d.hear("a", rssi: -65, at: t)
            d.hear("b", rssi: -62, at: t + 1)
        }
        #expect(d.summary == ["enter b @1"] || d.summary == ["enter a @0"])
        var e = Drive()
        for t in stride(from: Int64(0), to: 5_000, by: 1_000) { e.hear("a", rssi: -60, at: t) }
        for t in stride(from: Int64(5_000), to: 120_000, by: 1_000) {
            e.hear("a", rssi: -64, at: t)
            e.hear("b", rssi: -61, at: t + 1)
        }
        #expect(e.summary == ["enter a @0"])
    }

    @Test func noMoveWhenTheOtherBeaconIsNearerForLessThanTheDwell() {
        var d = Drive()
        for t in stride(from: Int64(0), to: 60_000, by: 500) {
            let blip = t >= 20_000 && t < 21_500
            d.hear("a", rssi: blip ? -80 : -60, at: t)
            d.hear("b", rssi: blip ? -55 : -75, at: t + 1)
        }
        #expect(d.summary == ["enter a @0"])
    }

    @Test func timeoutExitIsAtTheLastSightingAndDecidedAfterTheAbsenceTimeout() {
        var d = Drive()
        for t in stride(from: Int64(0), through: 20_000, by: 1_000) { d.hear("a", rssi: -60, at: t) }
        d.tick(to: 34_999)
        #expect(d.summary == ["enter a @0"])
        d.tick(to: 35_000)
        #expect(d.summary == ["enter a @0", "exit a timeout @20000"])
        #expect(d.events[1].entered == 0 && d.events[1].dwell == 20)
    }

    @Test func staysWhileTheBeaconIsSilentAndNothingElseWins() {
        var d = Drive()
        for t in stride(from: Int64(0), through: 5_000, by: 1_000) { d.hear("a", rssi: -60, at: t) }
        for t in stride(from: Int64(6_000), through: 18_000, by: 1_000) { d.hear("b", rssi: -95, at: t, radius: 2) }
        #expect(d.summary == ["enter a @0"])
        d.tick(to: 40_000)
        #expect(d.summary == ["enter a @0", "exit a timeout @5000"])
    }

    @Test func beyondTheRadiusABeaconDoesNotQualify() {
        var d = Drive()
        // -59 - 20 log10(3) = -68.5: about 3 m away.
        for t in stride(from: Int64(0), through: 10_000, by: 1_000) { d.hear("desk", rssi: -68.5, at: t, radius: 1.5) }
        d.tick(to: 40_000)
        #expect(d.events.isEmpty)
        var near = Drive()
        for t in stride(from: Int64(0), through: 10_000, by: 1_000) { near.hear("desk", rssi: -60, at: t, radius: 1.5) }
        #expect(near.summary == ["enter desk @0"])
    }

    @Test func aMoveWinsAgainstABeaconThatStoppedQualifying() {
        var d = Drive { $0.decision = .dwell }
        var h = Drive()
        for t in stride(from: Int64(0), through: 5_000, by: 1_000) {
            d.hear("a", rssi: -60, at: t)
            h.hear("a", rssi: -60, at: t)
        }
        for t in stride(from: Int64(6_000), through: 30_000, by: 1_000) {
            d.hear("b", rssi: -70, at: t)
            h.hear("b", rssi: -70, at: t)
        }
        // a's last sighting (5 s) stops qualifying after 10 s; b then wins after the 3 s dwell,
        // dated to when it became the nearer one.
        #expect(d.summary == ["enter a @0", "exit a moved @16000", "enter b @16000"])
        // The hmm decision hears b alone from 6 s on: b is where the evidence points once a is
        // no longer heard, sooner than the stale reading of a runs out.
        #expect(h.summary.count == 3 && h.summary.first == "enter a @0" && h.events.last?.beacon == "b")
        #expect(h.events.last.map { $0.at >= 6_000 && $0.at <= 16_000 } == true)
    }

    @Test func lateObservationsAreCountedAndAppliedAtTheEnginesTime() {
        var d = Drive()
        d.tick(to: 50_000)
        d.hear("a", rssi: -60, at: 40_000)
        d.hear("a", rssi: -60, at: 51_000)
        d.tick(to: 54_000)
        #expect(d.engine.statistics.late == 1)
        #expect(d.summary == ["enter a @50000"])
    }

    @Test func removingAUserEndsTheSessionWithTheReasonAndDropsPendingObservations() {
        var d = Drive()
        for t in stride(from: Int64(0), through: 3_000, by: 1_000) { d.hear("a", rssi: -60, at: t) }
        d.engine.ingest(Observation(time: 9_000, user: "alice", device: "tag-1", beacon: "a", venue: "expo", node: "n", rssi: -60, tx: -59))
        let exits = d.engine.remove(user: "alice", at: 4_000, reason: .incognito)
        #expect(exits.map(\.reason) == [.incognito])
        #expect(exits.first?.at == 4_000)
        #expect(d.engine.advance(to: 20_000).isEmpty)
        #expect(d.engine.presence(of: "alice") == nil)
    }

    @Test func removingABeaconOrDeviceEndsSessionsThere() {
        var d = Drive()
        for t in stride(from: Int64(0), through: 3_000, by: 1_000) {
            d.hear("a", rssi: -60, at: t)
            d.hear("a", rssi: -60, at: t, user: "bob", device: "tag-2")
        }
        let beaconExits = d.engine.removeBeacon("a", at: 4_000)
        #expect(beaconExits.map(\.user).sorted() == ["alice", "bob"])
        #expect(beaconExits.allSatisfy { $0.reason == .removed })
        for t in stride(from: Int64(5_000), through: 8_000, by: 1_000) { d.hear("b", rssi: -60, at: t) }
        let deviceExits = d.engine.removeDevice("tag-1", at: 9_000)
        #expect(deviceExits.map(\.beacon) == ["b"])
    }

    @Test func aResumedSessionContinuesWithoutASecondEnter() {
        var d = Drive()
        d.tick(to: 100_000)
        d.engine.resume(Presence(user: "alice", device: "tag-1", beacon: "a", venue: "expo", entered: 50_000, lastSeen: 99_000))
        for t in stride(from: Int64(101_000), through: 110_000, by: 1_000) { d.hear("a", rssi: -60, at: t) }
        #expect(d.events.isEmpty)
        d.tick(to: 200_000)
        #expect(d.summary == ["exit a timeout @110000"])
        #expect(d.events[0].entered == 50_000)
    }

    @Test func aResumedSessionOfSomeoneWhoLeftEndsAtTheirLastSightingAfterTheGrace() {
        var d = Drive()
        d.tick(to: 100_000)
        d.engine.resume(Presence(user: "alice", device: "tag-1", beacon: "a", venue: "expo", entered: 20_000, lastSeen: 30_000))
        d.tick(to: 104_999)
        #expect(d.events.isEmpty)
        d.tick(to: 105_000)
        #expect(d.summary == ["exit a timeout @30000"])
    }

    @Test func theSameCallsGiveTheSameEvents() {
        func run() -> [PresenceEvent] {
            var d = Drive()
            var random = RandomSource(seed: 7)
            for t in stride(from: Int64(0), to: 600_000, by: 250) {
                let beacon = ["a", "b", "c"][Int(random.next() % 3)]
                d.hear(beacon, rssi: -70 + random.gaussian() * 6, at: t + Int64(random.next() % 200))
                if t % 5_000 == 0 { d.tick(to: t) }
            }
            return d.events
        }
        let first = run()
        #expect(!first.isEmpty)
        #expect(first == run())
    }

    @Test func twoBeaconsTenDecibelsApartUnderFourDecibelNoiseNeverSwitchInAnHour() {
        var d = Drive()
        var random = RandomSource(seed: 42)
        for t in stride(from: Int64(0), to: 3_600_000, by: 1_000) {
            d.hear("a", rssi: -60 + (random.uniform() * 8 - 4), at: t)
            d.hear("b", rssi: -70 + (random.uniform() * 8 - 4), at: t + 3)
        }
        #expect(d.summary == ["enter a @0"])
    }
}
