import PresenceCore

/// A hysteresis rule on plain means: 5 s mean RSSI per beacon; another beacon takes over when its
/// mean exceeds the current one's by 4 dB at every 100 ms tick for 3 s in a row (a beacon not
/// heard in the window counts as infinitely weak, so the first enter also waits 3 s); nowhere as
/// soon as nothing at all was heard for 5 s.
struct MeanMarginBaseline: TickedBaseline {
    static let name = "mean-margin"
    static let tick: Int64 = 100
    static let window: Int64 = 5_000
    static let margin = 4.0
    static let hold: Int64 = 3_000

    /// The beacon that has led by the margin since `since`.
    private struct Challenger: Sendable {
        var beacon: String
        var since: Int64
    }

    private var window = LinkWindow(span: Self.window)
    private var current: String?
    private var challenger: Challenger?
    private(set) var leader: String?
    private(set) var lastHeard: Int64?

    mutating func observe(_ observation: Observation) {
        window.add(observation)
        lastHeard = observation.time
    }

    mutating func decide(at time: Int64) -> String? {
        window.slide(to: time)
        let means = window.beaconMeans()
        leader = means.strongest()?.beacon
        guard !means.isEmpty else {
            current = nil
            challenger = nil
            return nil
        }
        let held = current.flatMap { means[$0] } ?? -.infinity
        guard let best = means.strongest(excluding: current), best.value >= held + Self.margin else {
            challenger = nil
            return current
        }
        guard let waiting = challenger, waiting.beacon == best.beacon else {
            challenger = Challenger(beacon: best.beacon, since: time)
            return current
        }
        if time - waiting.since >= Self.hold {
            current = best.beacon
            challenger = nil
        }
        return current
    }
}
