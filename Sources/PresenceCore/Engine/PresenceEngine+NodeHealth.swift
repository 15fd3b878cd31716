extension PresenceEngine {
    /// A node was heard at `time`: a batch, or (`heartbeat`) its periodic stats. A node that sends
    /// heartbeats is expected to keep doing so; one that falls silent is suspected down.
    ///
    /// Every track is looked at again only when this can change a decision: a node starts being
    /// watched, or a watched node speaks after a silence longer than `heartbeatGrace` (readings it
    /// held may stand no more). A node heard as usual changes nothing that the tracks' own
    /// deadlines do not already foresee: its readings are fresh, and a stale reading is judged on
    /// its own deadline.
    public mutating func nodeHeard(_ node: String, at time: Int64, heartbeat: Bool) {
        // Changed where it lies: one lookup (foreign nodes are heard once per sighting).
        let heard = nodes[node, default: NodeHealth()].heard(at: time, heartbeat: heartbeat, grace: configuration.heartbeatGrace)
        if heard.startsWatch || heard.afterSilence {
            healthChanged = true
            if heard.startsWatch { watchedNodes += 1 }
        }
    }

    /// A node's status says it is offline (its will, or a clean stop) or online again.
    public mutating func setNode(_ node: String, offline: Bool, at time: Int64) {
        var health = nodes[node] ?? NodeHealth()
        let watched = health.isWatched
        health.offlineSince = offline ? (health.offlineSince ?? time) : nil
        if !offline { health.lastHeard = max(health.lastHeard, time) }
        nodes[node] = health
        watchedNodes += (health.isWatched ? 1 : 0) - (watched ? 1 : 0)
        healthChanged = true
    }

    /// How many nodes the engine keeps health for (registered nodes heard so far).
    public var nodeHealthCount: Int {
        nodes.count
    }

    /// Forgets the health of the nodes `condition` selects (nodes no longer registered).
    public mutating func forgetNodes(where condition: (String) -> Bool) {
        let gone = nodes.keys.filter(condition)
        guard !gone.isEmpty else { return }
        for node in gone where nodes.removeValue(forKey: node)?.isWatched ?? false {
            watchedNodes -= 1
        }
        healthChanged = true
    }

    /// Whether `node` cannot be trusted to have heard what happened after `since` at `time`: its
    /// status says offline, or it sends heartbeats and has said nothing since then. Only for
    /// `nodeDownHold` after that; then it counts as a node that simply heard nothing.
    func isSuspect(_ node: String, since: Int64, at time: Int64) -> Bool {
        guard let health = nodes[node] else { return false }
        if let offline = health.offlineSince {
            return time - max(since, offline) <= configuration.nodeDownHold
        }
        return health.heartbeats && health.lastHeard < since + configuration.heartbeatGrace
            && time - since <= configuration.nodeDownHold
    }
}

/// What the engine knows of a node's health.
struct NodeHealth: Sendable {
    var lastHeard = Int64.min
    /// Whether the node sends periodic stats, so that its silence means something.
    var heartbeats = false
    var offlineSince: Int64?

    /// Whether the node's silence or status can hold readings.
    var isWatched: Bool { heartbeats || offlineSince != nil }

    /// Heard at `time` (`heartbeat`: its stats): whether that starts its watch, and whether it is
    /// watched and spoke after a silence longer than `grace`.
    mutating func heard(at time: Int64, heartbeat: Bool, grace: Int64) -> (startsWatch: Bool, afterSilence: Bool) {
        let watched = isWatched
        let wasSilent = lastHeard < TimeBounds.difference(time, grace)
        lastHeard = max(lastHeard, time)
        heartbeats = heartbeats || heartbeat
        return (isWatched && !watched, isWatched && wasSilent)
    }
}
