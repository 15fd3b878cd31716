/// One node's reports on their way to batches: HCI events through the advertisement decoder
/// (frames, privacy policy, telemetry) or simulated sightings as they are, the batcher, and the
/// counters the node's stats report.
struct NodeReports: Sendable {
    /// Nil when the node's reports come decoded (simulated).
    private var decoder: AdvertisementDecoder?
    private var batcher: SightingBatcher
    private var decoded: [Sighting] = []
    /// Sightings put into batches since the start.
    private(set) var sightings = 0
    private var reportsAtLastStats = 0

    init(node: String, form: ReportForm, batchInterval: Int64, batchSize: Int) {
        if case .hciEvents(let options) = form { decoder = AdvertisementDecoder(options: options) }
        batcher = SightingBatcher(node: node, interval: batchInterval, maximumSightings: batchSize)
    }

    /// Decodes one HCI event heard at `ts` (its sightings dated `ts`), adding the batches it fills.
    mutating func take(event: ArraySlice<UInt8>, ts: Int64, now: Int64, into batches: inout [SightingBatch]) {
        decoded.removeAll(keepingCapacity: true)
        decoder?.decode(event: event, ts: ts, into: &decoded)
        for sighting in decoded { take(sighting, now: now, into: &batches) }
    }

    /// Batches one sighting, adding the batch it fills.
    mutating func take(_ sighting: Sighting, now: Int64, into batches: inout [SightingBatch]) {
        sightings += 1
        if let batch = batcher.add(sighting, at: now) { batches.append(batch) }
    }

    /// Adds the open batch if it has waited long enough.
    mutating func due(at now: Int64, into batches: inout [SightingBatch]) {
        if let batch = batcher.due(at: now) { batches.append(batch) }
    }

    /// Adds the open batch, whatever its age.
    mutating func drain(at now: Int64, into batches: inout [SightingBatch]) {
        if let batch = batcher.drain(at: now) { batches.append(batch) }
    }

    /// The counters since the start, and the report rate over the `interval` ms since the last call.
    mutating func statistics(uptime: Int64, interval: Int64) -> NodeStatistics {
        let reports = decoder?.statistics.reports ?? sightings
        let recent = reports - reportsAtLastStats
        reportsAtLastStats = reports
        var kinds: [String: Int] = [:]
        if let stats = decoder?.statistics {
            for kind in FrameKind.allCases where stats.frames(kind) > 0 { kinds[kind.name] = stats.frames(kind) }
        } else {
            kinds["simulated"] = sightings
        }
        return NodeStatistics(node: batcher.node, uptime: uptime, reportsPerSecond: Double(recent) * 1000 / Double(max(1, interval)),
                              sightings: sightings, dropped: decoder?.statistics.dropped ?? 0, kinds: kinds)
    }
}
