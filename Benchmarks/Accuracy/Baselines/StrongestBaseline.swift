import PresenceCore

/// The simplest rule: the beacon with the strongest mean RSSI over the last 2 s, switching at once;
/// nowhere when nothing was heard in those 2 s. Decides every 100 ms.
struct StrongestBaseline: TickedBaseline {
    static let name = "strongest"
    static let tick: Int64 = 100
    static let window: Int64 = 2_000

    private var window = LinkWindow(span: Self.window)

    mutating func observe(_ observation: Observation) {
        window.add(observation)
    }

    mutating func decide(at time: Int64) -> String? {
        window.slide(to: time)
        return window.beaconMeans().strongest()?.beacon
    }
}
