import Metrics
import PresenceCore
import Synchronization

/// The aggregator's metrics, through swift-metrics (served as Prometheus text at `/metrics` with
/// `--http`). The decision core keeps running totals; each `update` adds what they grew by since
/// the one before, so the counters stay counters across stats intervals. Labels come only from
/// fixed sets (reasons, kinds) and registered node keys, never from what a message says.
final class AggregatorMetrics: Sendable {
    /// Names of the decision-to-publish histogram, given its buckets by the factory.
    static let decisionToPublish = "presence_decision_to_publish_seconds"

    private struct Totals {
        var counters: [String: Int] = [:]
    }

    private let totals = Mutex(Totals())
    private let decisionTimer = Metrics.Timer(label: AggregatorMetrics.decisionToPublish)

    /// Brings the counters and gauges up to the decision core's figures: its counters, the events
    /// by kind and exit reason, the flaps, and each registered node's rate and state (labels:
    /// registered node keys only).
    func update(_ statistics: AggregatorCore.Statistics) {
        let counters = statistics.counters
        var grown: [(String, [(String, String)], Int)] = [
            ("presence_batches_total", [], counters.batches),
            ("presence_sightings_total", [], counters.sightings),
            ("presence_dropped_sightings_total", [], counters.droppedSightings),
            ("presence_observations_total", [], counters.observations),
            ("presence_late_observations_total", [], statistics.late),
            ("presence_flaps_total", [], statistics.flaps),
        ]
        for (reason, count) in counters.rejectedBatches { grown.append(("presence_rejected_batches_total", [("reason", reason)], count)) }
        for (reason, count) in counters.unmatched { grown.append(("presence_unmatched_sightings_total", [("reason", reason)], count)) }
        for reason in StrangerNodes.Reason.allCases {
            grown.append(("presence_stranger_messages_total", [("reason", reason.rawValue)], statistics.strangers.counts[reason] ?? 0))
        }
        for (tally, count) in statistics.events {
            grown.append(("presence_events_total", [("kind", tally.kind.rawValue)] + (tally.reason.map { [("reason", $0.rawValue)] } ?? []), count))
        }
        add(grown)
        Gauge(label: "presence_decision_lag_seconds").record(Double(statistics.decisionLag) / 1000)
        Gauge(label: "presence_catching_up").record(statistics.catchingUp ? 1 : 0)
        for (beacon, count) in statistics.present {
            Gauge(label: "presence_beacon_present_users", dimensions: [("beacon", beacon)]).record(count)
        }
        for (zone, count) in statistics.zonePresent {
            Gauge(label: "presence_zone_present_users", dimensions: [("zone", zone)]).record(count)
        }
        if let owned = statistics.ownedShards { Gauge(label: "presence_owned_shards").record(owned) }
        Gauge(label: "presence_shards").record(statistics.shards)
        for row in statistics.nodes {
            Gauge(label: "presence_node_sightings_per_second", dimensions: [("node", row.key)]).record(row.sightingsPerSecond ?? 0)
            Gauge(label: "presence_node_online", dimensions: [("node", row.key)]).record(row.online == true ? 1 : 0)
            if let skew = row.clockSkew {
                Gauge(label: "presence_node_clock_skew_seconds", dimensions: [("node", row.key)]).record(Double(skew) / 1000)
            }
        }
    }

    /// The problems of the venue's fleet health report, counted by kind and by what they are about
    /// (beacons, tags, nodes), every pair there at 0 when none: what the alerts read. Tags are
    /// counted, never named. A part (one aggregator's share of the venue) is left to the one that
    /// reports the whole venue.
    func update(_ report: FleetReport) {
        guard report.shards == nil else { return }
        var counts: [String: Int] = [:]
        for problem in report.problems { counts[problem.kind.rawValue + "|" + Self.name(problem.subject), default: 0] += 1 }
        let pairs: [(FleetReport.Problem.Kind, String)] = [
            (.lowBattery, "beacon"), (.lowBattery, "tag"), (.silent, "beacon"), (.silent, "tag"), (.nodeDown, "node"), (.nodeSkewed, "node"),
        ]
        for (kind, subject) in pairs {
            Gauge(label: "presence_fleet_problems", dimensions: [("problem", kind.rawValue), ("subject", subject)])
                .record(counts[kind.rawValue + "|" + subject] ?? 0)
        }
    }

    private static func name(_ subject: FleetReport.Problem.Subject) -> String {
        switch subject {
        case .beacon: "beacon"
        case .tag: "tag"
        case .node: "node"
        }
    }

    /// One event's wait from its decision to the broker's acknowledgement.
    func recordDecisionToPublish(milliseconds: Int64) {
        decisionTimer.recordMilliseconds(max(0, milliseconds))
    }

    /// The gauges of the shell: readiness, connections, queues, the journal.
    func updateShell(_ shell: Shell) {
        Gauge(label: "presence_ready").record(shell.ready ? 1 : 0)
        Gauge(label: "presence_broker_connected", dimensions: [("connection", "inbound")]).record(shell.inboundConnected ? 1 : 0)
        Gauge(label: "presence_broker_connected", dimensions: [("connection", "publish")]).record(shell.publishConnected ? 1 : 0)
        Gauge(label: "presence_database_reachable").record(shell.databaseReachable ? 1 : 0)
        Gauge(label: "presence_publish_in_flight").record(shell.inFlight)
        Gauge(label: "presence_journal_unpublished_bytes").record(shell.journalUnpublished)
        Gauge(label: "presence_journal_unapplied_bytes").record(shell.journalUnapplied)
        Gauge(label: "presence_inbox_waiting_bytes").record(shell.inboxWaitingBytes)
        Gauge(label: "presence_dead_letters").record(shell.deadLetters)
        Gauge(label: "presence_stream_pages").record(shell.pages)
        add([("presence_inbound_dropped_total", [], shell.inboundDropped)])
    }

    /// What the shell's parts say at one moment.
    struct Shell {
        /// What `/readyz` says: the broker connections up, the database reachable, the registry loaded.
        var ready: Bool
        var inboundConnected: Bool
        var publishConnected: Bool
        var databaseReachable: Bool
        var inFlight: Int
        var journalUnpublished: Int64
        var journalUnapplied: Int64
        var inboxWaitingBytes: Int
        var inboundDropped: Int
        var deadLetters: Int
        var pages: Int
    }

    private func add(_ values: [(String, [(String, String)], Int)]) {
        let increments = totals.withLock { totals in
            values.map { name, dimensions, total -> (String, [(String, String)], Int) in
                let key = name + dimensions.map { "|\($0.0)=\($0.1)" }.joined()
                let before = totals.counters[key] ?? 0
                totals.counters[key] = max(before, total)
                return (name, dimensions, max(0, total - before))
            }
        }
        // Made even when nothing was counted, so that every counter is there from the start at 0.
        for (name, dimensions, increment) in increments {
            let counter = Counter(label: name, dimensions: dimensions)
            if increment > 0 { counter.increment(by: increment) }
        }
    }
}
