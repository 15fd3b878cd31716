extension AggregatorCore {
    /// A message on `topic` (its UTF-8 bytes) arrived at `receivedAt`: as `receive(topic:payload:at:)`,
    /// without a String made of a foreign node's topic (an inbound connection's read holds them by the
    /// fifty).
    public mutating func receive(topicBytes topic: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer, at receivedAt: Int64) -> [Action] {
        switch state {
        case .starting: return [.refused(.notResumed)]
        case .finished: return []
        case .catchingUp, .live: break
        }
        // The other aggregators' topics come first, as `receive(topic:payload:at:)` reads them.
        let fromOthers = configuration.sharing && sharedTopicPrefixes.contains { topic.starts(with: $0) }
        if !configuration.foreign.isEmpty, !fromOthers {
            var actions: [Action] = []
            if receiveForeign(topic: topic, payload: payload, at: TimeBounds.clamped(receivedAt), into: &actions) { return actions }
        }
        return receive(topic: String(decoding: topic, as: UTF8.self), payload: payload, at: receivedAt)
    }

    /// A foreign node's message (`ForeignTopics`), when `topic` is one; returns whether it was: a
    /// report of one advertiser, decided as a native sighting is, or a room's or gateway's status,
    /// which counts as a native node's does (offline: its readings are held as a down node's, not
    /// taken for an absence).
    mutating func receiveForeign(topic: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer, at receivedAt: Int64, into actions: inout [Action]) -> Bool {
        guard let match = configuration.foreign.match(topic) else { return false }
        let name = UnsafeRawBufferPointer(rebasing: topic[match.node])
        // The name as the topic writes it, for logs and keys that are not the name itself.
        let written = { Substring(String(decoding: name, as: UTF8.self)) }
        let outcome: PresencePipeline.Outcome
        switch match.kind {
        case .espresenseReport:
            sightingArrived(at: receivedAt)
            outcome = pipeline.receiveForeign(payload, dialect: .espresense, node: name, at: receivedAt)
            calibrated(into: &actions)
        case .gatewayAdvertisement:
            sightingArrived(at: receivedAt)
            outcome = pipeline.receiveForeign(payload, dialect: .gateway, node: name, at: receivedAt)
            calibrated(into: &actions)
        case .status:
            guard let online = ForeignTopics.isOnline(payload) else {
                warn("status-unreadable", "ignored a foreign node status that is neither online nor offline",
                     ["node": StrangerNodes.displayName(written())], at: receivedAt, into: &actions)
                return true
            }
            let node = ForeignTopics.nodeKey(for: name).map { Substring($0) } ?? written()
            outcome = pipeline.receiveStatus(node: node, online: online, at: receivedAt)
            if outcome.refusal == nil, let held = limiter.admit("status-\(node)", at: receivedAt) {
                actions.append(.log(LogLine(.notice, "node status", ["node": String(node), "state": online ? "online" : "offline", "suppressed": "\(held)"])))
            }
        }
        if let refusal = outcome.refusal {
            warn("refused-\(refusal.reason)", "ignored a foreign node's message", [
                "node": StrangerNodes.displayName(written()), "reason": "\(refusal)",
            ], at: receivedAt, into: &actions)
        }
        decided(outcome.events, at: receivedAt, into: &actions)
        return true
    }
}
