extension AggregatorCore {
    /// A foreign node's message (`ForeignTopics`): a report of one advertiser, decided as a native
    /// sighting is, or a room's or gateway's status, which counts as a native node's does (offline:
    /// its readings are held as a down node's, not taken for an absence).
    mutating func receiveForeign(_ message: ForeignTopics.Message, payload: UnsafeRawBufferPointer, at receivedAt: Int64, into actions: inout [Action]) {
        let outcome: PresencePipeline.Outcome
        switch message {
        case .espresenseReport(let node):
            lastMessageAt = receivedAt
            outcome = pipeline.receiveForeign(payload, dialect: .espresense, node: node, at: receivedAt)
            calibrated(into: &actions)
        case .gatewayAdvertisement(let node):
            lastMessageAt = receivedAt
            outcome = pipeline.receiveForeign(payload, dialect: .gateway, node: node, at: receivedAt)
            calibrated(into: &actions)
        case .status(let name):
            guard let online = ForeignTopics.isOnline(payload) else {
                warn("status-unreadable", "ignored a foreign node status that is neither online nor offline",
                     ["node": StrangerNodes.displayName(name)], at: receivedAt, into: &actions)
                return
            }
            let node = ForeignTopics.nodeKey(for: name) ?? name
            outcome = pipeline.receiveStatus(node: node, online: online, at: receivedAt)
            if outcome.refusal == nil, let held = limiter.admit("status-\(node)", at: receivedAt) {
                actions.append(.log(LogLine(.notice, "node status", ["node": String(node), "state": online ? "online" : "offline", "suppressed": "\(held)"])))
            }
        }
        if let refusal = outcome.refusal {
            warn("refused-\(refusal.reason)", "ignored a foreign node's message", [
                "node": StrangerNodes.displayName(message.node), "reason": "\(refusal)",
            ], at: receivedAt, into: &actions)
        }
        decided(outcome.events, at: receivedAt, into: &actions)
    }
}

extension ForeignTopics.Message {
    /// The room's or gateway's name, as the topic writes it.
    var node: Substring {
        switch self {
        case .espresenseReport(let node), .gatewayAdvertisement(let node), .status(let node): node
        }
    }
}
