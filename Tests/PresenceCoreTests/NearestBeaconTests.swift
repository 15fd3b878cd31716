import Testing
@testable import PresenceCore

/// How the flags that shape "nearest" change which beacon wins: the RSSI smoother (`--smoothing`,
/// `--smoothing-time`) and what the choice rests on (`--choose`).
@Suite struct NearestBeaconTests {
    /// Alice stands at a: node-a hears her at -60 dBm, node-b at -66 dBm, every 250 ms. From 10 s a
    /// deep fade (a body between tag and node) drops a's readings to -90 dBm for 1 s, four readings.
    /// Under the `dwell` decision with no switch dwell, the smoother alone decides whether b looks
    /// the 4 dB margin nearer.
    @Test(arguments: [
        // Each reading pulls by at most 15 dB × (1 − e^(−¼)) = 3.3 dB: four take a to about -73 dBm,
        // b looks 7 dB nearer.
        (SmoothingMethod.exponential, Int64(1_000), true),
        // With a 3 s time constant, 1.2 dB a reading: a reaches about -65 dBm, b is not even nearer.
        (.exponential, 3_000, false),
        // The median of the last 2 s, nine readings: four outliers are fewer than half.
        (.median, 1_000, false),
        // Readings far outside the expected spread count for little: a reaches about -65 dBm.
        (.kalman, 1_000, false),
    ])
    func aOneSecondFadeMovesOnlyAFastExponentialSmoother(_ method: SmoothingMethod, _ time: Int64, _ moves: Bool) {
        var d = Drive {
            $0.decision = .dwell
            $0.smoothing.method = method
            $0.smoothing.timeConstant = time
            $0.switchDwell = 0
        }
        for t in stride(from: Int64(0), to: 16_000, by: 250) {
            d.hear("a", rssi: (10_000 ..< 11_000).contains(t) ? -90 : -60, at: t)
            d.hear("b", rssi: -66, at: t + 1)
        }
        #expect(d.events.first?.beacon == "a")
        #expect(d.events.contains { $0.kind == .enter && $0.beacon == "b" } == moves, "\(d.summary)")
    }

    /// A long room: the stage at x = 0, the bar's counter at x = 10, the door at (0, 6); each has a
    /// node, but the bar's hangs on a pillar at x = 4. Alice stands at (3, 0): 1 m from the bar's
    /// node, so the strongest signal is the bar's, yet 3 m from the stage and 7 m from the bar.
    /// The position from the three readings is (3, 0).
    @Test(arguments: [(EngineConfiguration.Choice.signal, "bar"), (.position, "stage")])
    func choosingByPositionPicksTheBeaconNearestTheEstimatedPosition(_ choice: EngineConfiguration.Choice, _ nearest: String) {
        func link(_ beacon: String, node: Coordinates, place: Coordinates) -> ObservedLink {
            ObservedLink(user: "alice", device: "tag-1", beacon: beacon, venue: "expo", node: "node-\(beacon)", anchor: node, place: place)
        }
        let stage = Coordinates(x: 0, y: 0)
        let door = Coordinates(x: 0, y: 6)
        // -59 dBm at 1 m, less 20 log10 of the distance: 3 m, 1 m and √45 = 6.7 m.
        let readings = [
            (link("stage", node: stage, place: stage), -68.54),
            (link("bar", node: Coordinates(x: 4, y: 0), place: Coordinates(x: 10, y: 0)), -59),
            (link("door", node: door, place: door), -75.53),
        ]
        var d = Drive { $0.choice = choice }
        for t in stride(from: Int64(0), through: 5_000, by: 500) {
            for (offset, (link, rssi)) in readings.enumerated() {
                d.hear(link, rssi: rssi, at: t + Int64(offset))
            }
        }
        #expect(d.events.map(\.beacon) == [nearest])
    }
}
