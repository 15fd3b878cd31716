import Foundation

/// An enter or exit event as the aggregator published it on the bus, or as a database stores it,
/// reduced to what the two must agree on.
struct PublishedEvent: Hashable, Sendable {
    let id: String
    let kind: String
    let user: String
    let beacon: String
    /// An exit's reason; empty for an enter.
    let reason: String
    /// ms since the epoch.
    let at: Int64

    /// `event beacon [reason]`, as a person's walk reads.
    var visit: String { reason.isEmpty ? "\(kind) \(beacon)" : "\(kind) \(beacon) \(reason)" }

    /// The events `bus` received under the harness's prefix, in order.
    static func published(_ bus: BusRecorder, _ h: PipelineHarness) -> [PublishedEvent] {
        bus.objects(on: "\(h.prefix)/v1/events/").map { event in
            PublishedEvent(id: event["id"] as? String ?? "", kind: event["event"] as? String ?? "", user: event["user"] as? String ?? "",
                           beacon: event["beacon"] as? String ?? "", reason: event["reason"] as? String ?? "",
                           at: (event["at"] as? Int).map(Int64.init) ?? -1)
        }
    }

    /// Every row of `presence.events` in the database at `url`.
    static func stored(in url: String) throws -> [PublishedEvent] {
        try TestDatabase.rows(url, """
            SELECT id, kind, user_key, beacon_key, COALESCE(payload::json->>'reason', ''), (EXTRACT(EPOCH FROM at) * 1000)::bigint
            FROM presence.events ORDER BY at, id
            """).map { row in
            let fields = row.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 6, let at = Int64(fields[5]) else { throw TestSetupError(message: "unexpected event row \(row)") }
            return PublishedEvent(id: fields[0], kind: fields[1], user: fields[2], beacon: fields[3], reason: fields[4], at: at)
        }
    }

    /// Each user's events, in order, as `visit`s.
    static func visits(_ events: [PublishedEvent]) -> [String: [String]] {
        Dictionary(grouping: events, by: \.user).mapValues { $0.map(\.visit) }
    }
}
