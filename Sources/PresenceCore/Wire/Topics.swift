/// The MQTT topic names of contract v1 under a prefix (`presence` by default).
public struct Topics: Sendable, Equatable {
    public let prefix: String

    /// Validates the prefix: non-empty, no wildcards, no empty levels, no leading or trailing `/`.
    public init(prefix: String = "presence") throws(ValueError) {
        let levels = prefix.split(separator: "/", omittingEmptySubsequences: false)
        guard !prefix.isEmpty, !levels.contains(where: \.isEmpty), !prefix.contains("+"), !prefix.contains("#"),
              !prefix.utf8.contains(0) else {
            throw ValueError("topic prefix '\(prefix)' is not valid: expected MQTT topic levels without wildcards or empty levels, such as 'presence' or 'site-a/presence'")
        }
        self.prefix = prefix
    }

    public var allSightings: String { "\(prefix)/v1/sightings/+" }
    public func sightings(node: String) -> String { "\(prefix)/v1/sightings/\(node)" }
    public func nodeStatus(node: String) -> String { "\(prefix)/v1/nodes/\(node)/status" }
    public func nodeStats(node: String) -> String { "\(prefix)/v1/nodes/\(node)/stats" }
    public var allNodeStatuses: String { "\(prefix)/v1/nodes/+/status" }
    public func event(beacon: String, user: String) -> String { "\(prefix)/v1/events/\(beacon)/\(user)" }
    public func userState(_ user: String) -> String { "\(prefix)/v1/state/users/\(user)" }
    public func beaconState(_ beacon: String) -> String { "\(prefix)/v1/state/beacons/\(beacon)" }
    public func notify(user: String) -> String { "\(prefix)/v1/notify/\(user)" }
    public var aggregatorStatus: String { "\(prefix)/v1/aggregator/status" }
    public var aggregatorStats: String { "\(prefix)/v1/aggregator/stats" }

    /// The node segment of a sightings topic, or nil when `topic` is not one.
    public func nodeOfSightings(_ topic: String) -> String? {
        nodeSegment(topic, after: "\(prefix)/v1/sightings/", before: "")
    }

    /// The node segment of a node status topic, or nil when `topic` is not one.
    public func nodeOfStatus(_ topic: String) -> String? {
        nodeSegment(topic, after: "\(prefix)/v1/nodes/", before: "/status")
    }

    private func nodeSegment(_ topic: String, after head: String, before tail: String) -> String? {
        guard topic.hasPrefix(head), topic.hasSuffix(tail) else { return nil }
        let segment = topic.dropFirst(head.count).dropLast(tail.count)
        guard !segment.isEmpty, !segment.contains("/") else { return nil }
        return String(segment)
    }
}
