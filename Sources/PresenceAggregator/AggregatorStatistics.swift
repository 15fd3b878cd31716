import PresenceCore

/// The aggregator's counters as published on `{p}/v1/aggregator/stats` (an extension of the
/// contract): batches and sightings taken in, what was dropped and why, events decided.
struct AggregatorStatistics {
    let counters: PipelineCounters

    init(_ counters: PipelineCounters) {
        self.counters = counters
    }

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
        }
        return writer.bytes
    }
}
