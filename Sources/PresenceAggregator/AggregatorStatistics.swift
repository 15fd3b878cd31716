import PresenceCore
import PresenceMQTT

/// The aggregator's counters as published on `{p}/v1/aggregator/stats` (an extension of the
/// contract): batches and sightings taken in, what was dropped and why, messages from strangers,
/// inbound messages dropped for lack of room, events decided.
struct AggregatorStatistics {
    let counters: PipelineCounters
    let strangers: StrangerNodes
    let inbound: MQTTStatistics
    /// Inbound messages the decision loop's queue had no room for.
    let loopDropped: Int
    /// How long the events published since the last stats waited from decision to acknowledgement.
    let decisionToPublish: LatencySummary

    func encoded() -> [UInt8] {
        var writer = JSONWriter()
        writer.object { w in
            w.member("v", 1)
            w.member("batches", counters.batches)
            w.key("rejected_batches")
            w.object { w in
                for (reason, count) in counters.rejectedBatches.sorted(by: { $0.key < $1.key }) { w.member(reason, count) }
            }
            w.member("sightings", counters.sightings)
            w.member("dropped_sightings", counters.droppedSightings)
            w.key("unmatched")
            w.object { w in
                for (reason, count) in counters.unmatched.sorted(by: { $0.key < $1.key }) { w.member(reason, count) }
            }
            w.member("observations", counters.observations)
            w.member("events", counters.events)
            w.key("strangers")
            w.object { w in
                for reason in StrangerNodes.Reason.allCases { w.member(reason.rawValue, strangers.counts[reason] ?? 0) }
            }
            w.key("recent_strangers")
            w.array { w in
                for entry in strangers.recent.sorted(by: { $0.last > $1.last }) {
                    w.object { w in
                        w.member("node", entry.name)
                        w.member("reason", entry.reason.rawValue)
                        w.member("count", entry.count)
                        w.member("last", entry.last)
                    }
                }
            }
            w.member("inbound_dropped", inbound.droppedInbound + loopDropped)
            w.member("inbound_dropped_bytes", inbound.droppedInboundBytes)
            w.key("decision_to_publish_ms")
            w.object { w in
                w.member("count", decisionToPublish.count)
                w.member("p50", Int64(clamping: decisionToPublish.p50))
                w.member("p99", Int64(clamping: decisionToPublish.p99))
                w.member("max", Int64(clamping: decisionToPublish.max))
            }
        }
        return writer.bytes
    }
}
