@testable import PresenceCore

/// Feeds an engine observations the way the aggregator does: each at its time, then "now".
struct Drive {
    var engine: PresenceEngine
    var events: [PresenceEvent] = []
    /// The engine's time when each of `events` came out: when it was decided, not its back-dated `at`.
    var decidedAt: [Int64] = []

    init(_ configure: (inout EngineConfiguration) -> Void = { _ in }) {
        var configuration = EngineConfiguration()
        configure(&configuration)
        engine = PresenceEngine(configuration: configuration, now: 0)
    }

    mutating func hear(_ beacon: String, rssi: Double, at time: Int64, user: String = "alice", device: String = "tag-1",
                       node: String? = nil, radius: Double? = nil, tx: Double = -59, txKnown: Bool = true) {
        hear(ObservedLink(user: user, device: device, beacon: beacon, venue: "expo", node: node ?? "node-\(beacon)", radius: radius),
             rssi: rssi, at: time, tx: tx, txKnown: txKnown)
    }

    /// An observation of a link described in full (coordinates included).
    mutating func hear(_ link: ObservedLink, rssi: Double, at time: Int64, tx: Double = -59, txKnown: Bool = true) {
        engine.ingest(Observation(time: time, link: link, rssi: rssi, tx: tx, txKnown: txKnown))
        tick(to: time)
    }

    mutating func tick(to time: Int64) {
        let decided = engine.advance(to: time)
        events += decided
        decidedAt += repeatElement(engine.now, count: decided.count)
    }

    var summary: [String] {
        events.map { "\($0.kind.rawValue) \($0.beacon)\($0.reason.map { " " + $0.rawValue } ?? "") @\($0.at)" }
    }
}
