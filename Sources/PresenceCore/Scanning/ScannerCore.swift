/// The decisions of a scanner service as one value, with no I/O: its nodes' reports go in with the
/// time, and what to publish comes out: the batches that filled or waited long enough, and every
/// node's stats each `statsInterval`. Time is passed in, ms since the epoch.
public struct ScannerCore: Sendable {
    /// What to publish after a step.
    public struct Output: Sendable, Equatable {
        public var batches: [SightingBatch] = []
        /// Every node's stats, when they are due.
        public var statistics: [NodeStatistics] = []
    }

    /// The nodes in the order given, and where each key is.
    private var nodes: [NodeReports]
    private let slots: [String: Int]
    private let statsInterval: Int64
    private let started: Int64
    private var statsAt: Int64

    /// A core for `nodes`, whose reports are of `form`, started at `started`. A batch closes when
    /// its oldest sighting has waited `batchInterval` ms or when it holds `batchSize` sightings.
    public init(nodes: [String], form: ReportForm, batchInterval: Int64, batchSize: Int, statsInterval: Int64, started: Int64) {
        self.nodes = nodes.map { NodeReports(node: $0, form: form, batchInterval: batchInterval, batchSize: batchSize) }
        slots = Dictionary(nodes.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        self.statsInterval = statsInterval
        self.started = started
        statsAt = started
    }

    /// Takes one report at `now`; what a node the core does not have heard is ignored.
    public mutating func take(_ report: TimedReport, at now: Int64) -> Output {
        var output = Output()
        switch report {
        case .hciEvent(let event, let ts, let node):
            if let slot = slots[node] { nodes[slot].take(event: event, ts: ts, now: now, into: &output.batches) }
        case .sightings(let heard):
            for one in heard {
                if let slot = slots[one.node] { nodes[slot].take(one.sighting, now: now, into: &output.batches) }
            }
        case .tick:
            break
        }
        for slot in nodes.indices { nodes[slot].due(at: now, into: &output.batches) }
        if now - statsAt >= statsInterval { output.statistics = statistics(at: now) }
        return output
    }

    /// No more reports: every open batch, and every node's last stats.
    public mutating func finish(at now: Int64) -> Output {
        var output = Output()
        for slot in nodes.indices { nodes[slot].drain(at: now, into: &output.batches) }
        output.statistics = statistics(at: now)
        return output
    }

    private mutating func statistics(at now: Int64) -> [NodeStatistics] {
        let interval = now - statsAt
        statsAt = now
        return nodes.indices.map { nodes[$0].statistics(uptime: now - started, interval: interval) }
    }
}
