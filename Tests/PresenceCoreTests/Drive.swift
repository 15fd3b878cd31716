@testable import PresenceCore

/// Feeds an engine observations the way the aggregator does: each at its time, then "now".
struct Drive {
    var engine: PresenceEngine
    var events: [PresenceEvent] = []

    init(_ configure: (inout EngineConfiguration) -> Void = { _ in }) {
        var configuration = EngineConfiguration()
        configure(&configuration)
        engine = PresenceEngine(configuration: configuration, now: 0)
    }

    mutating func hear(_ beacon: String, rssi: Double, at time: Int64, user: String = "alice", device: String = "tag-1",
                       node: String? = nil, radius: Double? = nil, tx: Double = -59) {
        engine.ingest(Observation(time: time, user: user, device: device, beacon: beacon, venue: "expo", node: node ?? "node-\(beacon)",
                                  rssi: rssi, tx: tx, radius: radius))
        events += engine.advance(to: time)
    }

    mutating func tick(to time: Int64) {
        events += engine.advance(to: time)
    }

    var summary: [String] {
        events.map { "\($0.kind.rawValue) \($0.beacon)\($0.reason.map { " " + $0.rawValue } ?? "") @\($0.at)" }
    }
}
