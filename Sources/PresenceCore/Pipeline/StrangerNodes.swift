/// Messages on node topics from nodes the registry does not know, or whose topic segment is not a
/// key at all: counted by reason, with the last few names kept for diagnostics. Anyone who can
/// publish can invent names without end, so nothing here grows with them: the table holds at most
/// `capacity` names (the one heard longest ago gives way), each cut to 64 printable characters.
public struct StrangerNodes: Sendable, Equatable {
    /// Why a message on a node topic was ignored.
    public enum Reason: String, Sendable, CaseIterable {
        /// The topic's node segment is not a key (`[a-z0-9][a-z0-9._-]{0,63}`).
        case badNodeName = "bad_node_name"
        /// A valid key that no registered node (nor `node:` device) has.
        case unregisteredNode = "unregistered_node"
    }

    /// One name heard recently.
    public struct Entry: Sendable, Equatable {
        /// The name as heard, cut to 64 characters, anything but printable ASCII shown as `?`.
        public var name: String
        public var reason: Reason
        public var count: Int
        /// When it was last heard, ms.
        public var last: Int64
    }

    public static let capacity = 16
    public private(set) var counts: [Reason: Int] = [:]
    public private(set) var recent: [Entry] = []

    public init() {}

    /// Counts a message from `name` at `time`.
    public mutating func record(_ name: Substring, reason: Reason, at time: Int64) {
        counts[reason, default: 0] += 1
        let shown = Self.displayName(name)
        if let index = recent.firstIndex(where: { $0.name == shown && $0.reason == reason }) {
            recent[index].count += 1
            recent[index].last = max(recent[index].last, time)
            return
        }
        let entry = Entry(name: shown, reason: reason, count: 1, last: time)
        if recent.count < Self.capacity {
            recent.append(entry)
        } else if let oldest = recent.indices.min(by: { recent[$0].last < recent[$1].last }) {
            recent[oldest] = entry
        }
    }

    /// `name` cut to `limit` bytes, with every byte that is not printable ASCII replaced by `?`:
    /// safe to log or publish whatever a stranger sent.
    public static func displayName(_ name: Substring, limit: Int = 64) -> String {
        String(decoding: name.utf8.prefix(limit).map { (0x20 ... 0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}
