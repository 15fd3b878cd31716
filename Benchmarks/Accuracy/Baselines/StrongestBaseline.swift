import PresenceCore

/// The simplest rule: the beacon with the strongest mean RSSI over the last 2 s, switching at once;
/// nowhere when nothing was heard in those 2 s. Decides every 100 ms.
struct StrongestBaseline: TickedBaseline {
    static let name = "strongest"
    static let tick: Int64 = 100
    static let window: Int64 = 2_000

    private var window = LinkWindow(span: Self.window)
    private(set) var leader: String?
    private(set) var lastHeard: Int64?

    mutating func observe(_ observation: Observation) {
        window.add(observation)
        lastHeard = observation.time
    }

    mutating func decide(at time: Int64) -> String? {
        window.slide(to: time)
        leader = window.beaconMeans().strongest()?.beacon
        return leader
    }
}
