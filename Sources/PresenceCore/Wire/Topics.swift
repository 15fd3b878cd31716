/// The MQTT topic names of contract v1 under a prefix (`presence` by default).
public struct Topics: Sendable, Equatable {
    public let prefix: String

    /// The topics under the default prefix, `presence`.
    public static let standard = Topics(valid: "presence")

    private init(valid prefix: String) {
        self.prefix = prefix
    }

    /// Validates the prefix: non-empty, no wildcards, no empty levels, no leading or trailing `/`.
    public init(prefix: String = "presence") throws(ValueError) {
        try Topics.validate(prefix: prefix)
        self.prefix = prefix
    }

    /// Throws unless `prefix` is MQTT topic levels without wildcards or empty levels; `what` names
    /// the flag in the error.
    public static func validate(prefix: String, what: String = "topic prefix", example: String = "'presence' or 'site-a/presence'") throws(ValueError) {
        let levels = prefix.split(separator: "/", omittingEmptySubsequences: false)
        guard !prefix.isEmpty, !levels.contains(where: \.isEmpty), !prefix.contains("+"), !prefix.contains("#"),
              !prefix.utf8.contains(0) else {
            throw ValueError("\(what) '\(prefix)' is not valid: expected MQTT topic levels without wildcards or empty levels, such as \(example)")
        }
    }

    public var allSightings: String { "\(prefix)/v1/sightings/+" }
    /// Every shard's sightings of every node (the contract's sharding).
    public var allShardedSightings: String { "\(prefix)/v1/sightings/+/+" }
    /// Every node's part of shard `shard`.
    public func shardSightings(_ shard: Int) -> String { "\(prefix)/v1/sightings/+/\(shard)" }
    public func sightings(node: String) -> String { "\(prefix)/v1/sightings/\(node)" }
    /// One shard's part of a node's batch.
    public func sightings(node: String, shard: Int) -> String { "\(prefix)/v1/sightings/\(node)/\(shard)" }
    /// The venue's configuration for nodes (`VenueConfig`), retained.
    public var config: String { "\(prefix)/v1/config" }
    public func nodeStatus(node: String) -> String { "\(prefix)/v1/nodes/\(node)/status" }
    public func nodeStats(node: String) -> String { "\(prefix)/v1/nodes/\(node)/stats" }
    public var allNodeStatuses: String { "\(prefix)/v1/nodes/+/status" }
    public var allNodeStats: String { "\(prefix)/v1/nodes/+/stats" }

    public func event(beacon: String, user: String) -> String { "\(prefix)/v1/events/\(beacon)/\(user)" }
    /// What every event topic begins with.
    public var eventPrefix: String { "\(prefix)/v1/events/" }
    public var allEvents: String { "\(prefix)/v1/events/+/+" }
    public func userState(_ user: String) -> String { "\(prefix)/v1/state/users/\(user)" }
    /// What every user state topic begins with.
    public var userStatePrefix: String { "\(prefix)/v1/state/users/" }
    public var allUserStates: String { "\(prefix)/v1/state/users/+" }
    public func beaconState(_ beacon: String) -> String { "\(prefix)/v1/state/beacons/\(beacon)" }
    /// A user's enter or exit of a zone (`ZoneEvent`).
    public func zoneEvent(zone: String, user: String) -> String { "\(prefix)/v1/zones/events/\(zone)/\(user)" }
    /// Who is in a zone (`ZoneState`), retained.
    public func zoneState(_ zone: String) -> String { "\(prefix)/v1/zones/state/\(zone)" }
    public var allZoneStates: String { "\(prefix)/v1/zones/state/+" }
    public func notify(user: String) -> String { "\(prefix)/v1/notify/\(user)" }
    public var aggregatorStatus: String { "\(prefix)/v1/aggregator/status" }
    public var aggregatorStats: String { "\(prefix)/v1/aggregator/stats" }
    /// The fleet's health, retained (an extension of the contract).
    public var health: String { "\(prefix)/v1/health" }
    /// One aggregator's part of the fleet's health while several share the venue, retained.
    public func healthPart(_ aggregator: String) -> String { "\(prefix)/v1/health/parts/\(aggregator)" }
    /// What every health part topic begins with.
    public var healthPartPrefix: String { "\(prefix)/v1/health/parts/" }
    public var allHealthParts: String { "\(prefix)/v1/health/parts/+" }

    /// What a node publishes, as the aggregator reads it.
    public enum NodeMessage: Equatable, Sendable {
        case sightings(node: String)
        case status(node: String)
        case stats(node: String)
    }

    /// What a topic of any prefix carries, from its last levels: `…/v1/sightings/{node}` (or
    /// `…/v1/sightings/{node}/{shard}`, a shard being a decimal number), `…/v1/nodes/{node}/status`,
    /// `…/v1/nodes/{node}/stats`; nil for anything else. The one reading of node topics: the
    /// aggregator, `replay` and `discover` all use it.
    public static func nodeMessage(in topic: String) -> NodeMessage? {
        let (last, lastSlash) = level(of: topic, endingAt: topic.endIndex)
        guard let lastSlash, !last.isEmpty else { return nil }
        let (second, secondSlash) = level(of: topic, endingAt: lastSlash)
        guard let secondSlash, !second.isEmpty else { return nil }
        let (third, thirdSlash) = level(of: topic, endingAt: secondSlash)
        if second == "sightings", third == "v1" { return .sightings(node: String(last)) }
        guard let thirdSlash else { return nil }
        let fourth = level(of: topic, endingAt: thirdSlash).level
        if third == "sightings", fourth == "v1", last.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return .sightings(node: String(second))
        }
        guard third == "nodes", fourth == "v1" else { return nil }
        switch last {
        case "status": return .status(node: String(second))
        case "stats": return .stats(node: String(second))
        default: return nil
        }
    }

    /// The level of `topic` that ends at `end`, and the `/` before it (nil when it is the first level).
    private static func level(of topic: String, endingAt end: String.Index) -> (level: Substring, slash: String.Index?) {
        let slash = topic.utf8[..<end].lastIndex(of: UInt8(ascii: "/"))
        let start = slash.map { topic.utf8.index(after: $0) } ?? topic.startIndex
        return (topic[start ..< end], slash)
    }
}
