/// Groups one node's sightings into batches: a batch closes when its oldest sighting has waited
/// `interval` ms or when it holds `maximumSightings`. Batches are numbered from 1 (`seq`).
public struct SightingBatcher: Sendable {
    public let node: String
    public let interval: Int64
    public let maximumSightings: Int
    public private(set) var seq: Int64 = 0
    private var pending: [Sighting] = []
    private var openedAt: Int64?

    public init(node: String, interval: Int64, maximumSightings: Int = 1_000) {
        self.node = node
        self.interval = max(0, interval)
        self.maximumSightings = min(max(1, maximumSightings), SightingLimits.maximumSightings)
    }

    /// Adds a sighting heard now; returns a batch if this one filled it.
    public mutating func add(_ sighting: Sighting, at now: Int64) -> SightingBatch? {
        if pending.isEmpty { openedAt = now }
        pending.append(sighting)
        return pending.count >= maximumSightings ? close(at: now) : nil
    }

    /// The open batch, if it has waited long enough at `now`.
    public mutating func due(at now: Int64) -> SightingBatch? {
        guard let openedAt, now - openedAt >= interval else { return nil }
        return close(at: now)
    }

    /// The open batch, whatever its age (at shutdown).
    public mutating func drain(at now: Int64) -> SightingBatch? {
        pending.isEmpty ? nil : close(at: now)
    }

    private mutating func close(at now: Int64) -> SightingBatch? {
        guard !pending.isEmpty else { return nil }
        seq += 1
        let batch = SightingBatch(node: node, seq: seq, sent: now, sightings: pending)
        pending.removeAll(keepingCapacity: true)
        openedAt = nil
        return batch
    }
}
