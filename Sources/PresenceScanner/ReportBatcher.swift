import PresenceCore

/// Turns HCI events into published batches for one node: the advertisement decoder (frames,
/// privacy policy, telemetry), the batcher, and the counters the node's stats report.
struct ReportBatcher: Sendable {
    private(set) var decoder: AdvertisementDecoder
    private var batcher: SightingBatcher
    private var sightings: [Sighting] = []
    private(set) var sightingCount = 0
    private var reportsAtLastStats = 0

    init(node: String, configuration: ScannerConfiguration, options: AdvertisementDecoder.Options) {
        decoder = AdvertisementDecoder(options: options)
        batcher = SightingBatcher(node: node, interval: configuration.batchInterval, maximumSightings: configuration.batchSize)
    }

    /// Decodes one HCI event heard at `ts` (sightings dated `ts`); returns the batches it filled.
    mutating func take(event: ArraySlice<UInt8>, ts: Int64, now: Int64) -> [SightingBatch] {
        sightings.removeAll(keepingCapacity: true)
        decoder.decode(event: event, ts: ts, into: &sightings)
        var full: [SightingBatch] = []
        for sighting in sightings {
            sightingCount += 1
            if let batch = batcher.add(sighting, at: now) { full.append(batch) }
        }
        return full
    }

    /// The open batch, if it has waited long enough.
    mutating func due(at now: Int64) -> SightingBatch? {
        batcher.due(at: now)
    }

    /// The open batch, whatever its age.
    mutating func drain(at now: Int64) -> SightingBatch? {
        batcher.drain(at: now)
    }

    /// The counters since the start, and the report rate since the last call, for the stats.
    mutating func statistics(node: String, uptime: Int64, interval: Int64) -> NodeStatistics {
        let stats = decoder.statistics
        let recent = stats.reports - reportsAtLastStats
        reportsAtLastStats = stats.reports
        var kinds: [String: Int] = [:]
        for kind in FrameKind.allCases where stats.frames(kind) > 0 { kinds[kind.name] = stats.frames(kind) }
        return NodeStatistics(node: node, uptime: uptime, reportsPerSecond: Double(recent) * 1000 / Double(max(1, interval)),
                              sightings: sightingCount, dropped: stats.dropped, kinds: kinds)
    }
}
