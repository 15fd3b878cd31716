import PresenceCore

/// The server-sent events of the page's stream (`text/event-stream`): `snapshot` (everything, to
/// start from), `presence` (an event of the feed, its cursor as the id), `user`, `beacon` and
/// `nodes`, each carrying JSON on one `data:` line.
enum ServerSentEvent {
    static func snapshot(_ json: [UInt8], cursor: Int64) -> [UInt8] {
        encode(name: "snapshot", id: cursor, json: json)
    }

    /// An update of the feed (`presence`, its cursor as the id), a user, a beacon or the nodes;
    /// nil for `snapshot`, which the caller supplies.
    static func message(_ update: PageUpdate) -> [UInt8]? {
        guard let json = update.json else { return nil }
        switch update {
        case .event(let entry): return encode(name: "presence", id: entry.cursor, json: json)
        case .user: return encode(name: "user", json: json)
        case .beacon: return encode(name: "beacon", json: json)
        case .nodes: return encode(name: "nodes", json: json)
        case .snapshot: return nil
        }
    }

    /// A comment line that keeps idle connections (and proxies) from timing out.
    static let keepAlive = Array(": keep-alive\n\n".utf8)

    /// JSON from `JSONWriter` escapes control characters, so it is always one line.
    private static func encode(name: String, id: Int64? = nil, json: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(json.count + 40)
        bytes += "event: \(name)\n".utf8
        if let id { bytes += "id: \(id)\n".utf8 }
        bytes += "data: ".utf8
        bytes += json
        bytes += "\n\n".utf8
        return bytes
    }
}
