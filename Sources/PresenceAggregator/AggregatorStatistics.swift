import Logging
import PresenceCore
import PresenceMQTT

/// The aggregator's counters as published on `{p}/v1/aggregator/stats` (an extension of the
/// contract): batches and sightings taken in, what was dropped and why, messages from strangers,
/// inbound messages dropped for lack of room, events decided, how far behind decisions are, how
/// long events waited to be published, and (with `--self-calibrate`) the nodes' fitted offsets;
/// which aggregator says so (its client id as a topic level) and how many shards it owns, since
/// several may share a venue.
struct AggregatorStatistics {
    let aggregator: String
    let core: AggregatorCore.Statistics
    let inbox: LoopInbox.Counters
    let journal: Journal.Status
    /// Published messages awaiting the broker's acknowledgement.
    let inFlight: Int
    /// Records and messages set aside since the start.
    let deadLetters: Int
    /// How long the events published since the last stats waited from decision to acknowledgement.
    let decisionToPublish: LatencySummary

    func encoded() -> [UInt8] {
        let counters = core.counters
        var writer = JSONWriter()
        writer.object { w in
            w.member("v", 1)
            w.member("aggregator", aggregator)
            w.member("owned_shards", core.ownedShards)
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
            w.member("late", core.late)
            w.member("events", counters.events)
            w.key("strangers")
            w.object { w in
                for reason in StrangerNodes.Reason.allCases { w.member(reason.rawValue, core.strangers.counts[reason] ?? 0) }
            }
            w.key("recent_strangers")
            w.array { w in
                for entry in core.strangers.recent.sorted(by: { $0.last > $1.last }) {
                    w.object { w in
                        w.member("node", entry.name)
                        w.member("reason", entry.reason.rawValue)
                        w.member("count", entry.count)
                        w.member("last", entry.last)
                    }
                }
            }
            w.member("inbound_dropped", inbox.dropped)
            w.member("inbound_dropped_bytes", inbox.droppedBytes)
            w.member("inbound_waiting_bytes", inbox.waitingBytes)
            w.member("decision_lag_ms", core.decisionLag)
            w.key("journal")
            w.object { w in
                w.member("retained_bytes", Int64(clamping: journal.retainedBytes))
                w.member("unpublished_bytes", Int64(clamping: journal.end - min(journal.end, journal.published)))
                w.member("unapplied_bytes", Int64(clamping: journal.end - min(journal.end, journal.applied)))
            }
            w.member("publish_in_flight", inFlight)
            w.member("dead_letters", deadLetters)
            w.key("catching_up")
            w.bool(core.catchingUp)
            w.key("decision_to_publish_ms")
            w.object { w in
                w.member("count", decisionToPublish.count)
                w.member("p50", Int64(clamping: decisionToPublish.p50))
                w.member("p99", Int64(clamping: decisionToPublish.p99))
                w.member("max", Int64(clamping: decisionToPublish.max))
            }
            if let calibration = core.calibration {
                w.key("calibration")
                w.object { w in
                    w.member("readings", calibration.readings)
                    w.member("fitted_at", calibration.fittedAt)
                    w.member("links", calibration.fit?.links)
                    w.member("residual_db", number: calibration.fit?.residual)
                    w.member("path_loss_exponent", number: calibration.fit?.exponent)
                    if let groups = calibration.fit?.groups, !groups.isEmpty {
                        w.key("groups")
                        w.array { w in
                            for group in groups {
                                w.object { w in
                                    w.member("area", group.area)
                                    w.member("nodes", group.nodes.count)
                                    w.member("links", group.links)
                                    w.member("residual_db", number: group.residual)
                                    w.member("path_loss_exponent", number: group.exponent)
                                }
                            }
                        }
                    }
                    w.key("offsets_db")
                    w.object { w in
                        for (node, offset) in calibration.applied.sorted(by: { $0.key < $1.key }) { w.member(node, number: offset) }
                    }
                }
            }
        }
        return writer.bytes
    }

    /// The main counters, for the log.
    var metadata: Logger.Metadata {
        let counters = core.counters
        return [
            "batches": "\(counters.batches)", "rejected": "\(counters.rejectedBatches.values.reduce(0, +))", "sightings": "\(counters.sightings)",
            "dropped_sightings": "\(counters.droppedSightings)", "observations": "\(counters.observations)", "late": "\(core.late)",
            "events": "\(counters.events)", "inbound_dropped": "\(inbox.dropped)", "decision_lag_ms": "\(core.decisionLag)",
            "journal_unpublished_bytes": "\(journal.end - min(journal.end, journal.published))",
            "journal_unapplied_bytes": "\(journal.end - min(journal.end, journal.applied))", "dead_letters": "\(deadLetters)",
        ]
    }
}
