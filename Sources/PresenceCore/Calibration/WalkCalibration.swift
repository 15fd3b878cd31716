/// Each node's RSSI offset from a calibration walk (`presencectl calibrate`): one person carrying
/// a registered device stands at each beacon for about a minute while `presencectl record` runs.
/// The readings that the nodes anchored at a beacon take of that device while the walker stands
/// there are path losses (tx − RSSI) from about the same distance at every beacon, so the nodes'
/// medians differ by each node's gain. A node's offset is its median less the median of all
/// calibrated nodes' medians: dB to add to its RSSI (`Registry.Node.rssiOffset`).
///
/// Readings are dated as the aggregator dates them (the sighting's timestamp, corrected when its
/// node's clock is off by more than the skew threshold, never after the batch's arrival); stays
/// count from the recording's first line. The first and last `trim` of each stay are left out
/// (the walker is arriving or leaving). RSSI is taken raw: registered offsets are not applied,
/// since the offsets found replace them. Pure: recorded lines in, figures out.
public struct WalkCalibration: Sendable {
    /// Left out at each end of a stay, ms.
    public static let trim: Int64 = 5_000
    /// Readings a node needs for an offset.
    public static let minimumReadings = 20

    /// One stay of the walker, `BEACON=FROM..TO`: at `beacon` from `from` to `to`, ms after the
    /// recording's first line.
    public struct Stay: Sendable, Equatable {
        public var beacon: String
        public var from: Int64
        public var to: Int64

        public init(beacon: String, from: Int64, to: Int64) {
            self.beacon = beacon
            self.from = from
            self.to = to
        }

        /// Reads `BEACON=FROM..TO` (durations such as `10s..70s`); the error names `what` and
        /// the text. What is left after trimming both ends must be more than nothing.
        public init(parsing text: String, what: String = "stay") throws(ValueError) {
            let invalid = { (expected: String) in ValueError("\(what) '\(text)' is not valid: expected \(expected)") }
            let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let span = parts.count == 2 ? parts[1] : ""
            guard let dots = span.indices.first(where: { span[$0...].hasPrefix("..") }) else {
                throw invalid("BEACON=FROM..TO, such as booth-a=10s..70s")
            }
            guard Slug.isValid(parts[0]) else { throw invalid("a beacon key before '='") }
            let from: Int64, to: Int64
            do {
                from = try DurationText.milliseconds(String(span[..<dots]))
                to = try DurationText.milliseconds(String(span[span.index(dots, offsetBy: 2)...]))
            } catch {
                throw invalid("durations from the recording's first line, such as 10s..70s")
            }
            guard to - from > 2 * WalkCalibration.trim else {
                throw invalid("TO more than \(DurationText.format(2 * WalkCalibration.trim)) after FROM (\(DurationText.format(WalkCalibration.trim)) is left out at each end)")
            }
            self.init(beacon: String(parts[0]), from: from, to: to)
        }
    }

    /// One node's figures.
    public struct Figure: Sendable, Equatable {
        public var node: String
        /// The beacon it is anchored to.
        public var beacon: String
        public var readings: Int
        /// Median path loss of its readings, dB, read between whole-dB steps (`steppedMedian`).
        public var median: Double?
        /// Interquartile range of its path losses, dB: how steady the readings were.
        public var spread: Double?
        /// dB to add to its RSSI; nil when it is not calibrated.
        public var offset: Double?

        /// Whether it has readings enough for an offset.
        public var hasEnoughReadings: Bool { readings >= WalkCalibration.minimumReadings }
    }

    private let stays: [Stay]
    /// The beacon each node is anchored to, for the nodes at a beacon of a stay.
    private let anchors: [String: String]
    /// The walker's devices, with their registered tx power.
    private let devices: IdentityTable<Double?>
    private let skewThreshold: Int64
    /// The recording's first arrival, ms since the epoch.
    public private(set) var origin: Int64?
    private var clocks: [String: NodeClock] = [:]
    private var readings: [String: [Double]] = [:]
    private var scratch: [SightingBatchDecoder.Scanned] = []

    /// A calibration of the nodes anchored at the stays' beacons, from the readings of
    /// `devices` (canonical identities). Every stay's beacon must be registered and have a node.
    public init(registry: Registry, devices: Set<String>, stays: [Stay],
                skewThreshold: Int64 = PresencePipeline.Configuration().skewThreshold) throws(ValueError) {
        for stay in stays {
            guard registry.beacons[stay.beacon] != nil else {
                throw ValueError("beacon '\(stay.beacon)' is not registered: add it with `presencectl beacon add \(stay.beacon)`")
            }
            guard registry.nodes.values.contains(where: { $0.beacon == stay.beacon }) else {
                throw ValueError("beacon '\(stay.beacon)' has no node anchored to it: anchor one with `presencectl node add KEY --beacon \(stay.beacon)`")
            }
        }
        let beacons = Set(stays.map(\.beacon))
        var anchors: [String: String] = [:]
        for node in registry.nodes.values {
            if let beacon = node.beacon, beacons.contains(beacon) { anchors[node.key] = beacon }
        }
        self.stays = stays
        self.anchors = anchors
        self.devices = IdentityTable(devices.sorted().map { ($0, registry.devices[$0]?.tx.map(Double.init)) })
        self.skewThreshold = skewThreshold
    }

    /// Takes one line of a recording: the first line with an arrival time sets the origin; the
    /// sightings of a node at a stay's beacon are read, every other line only moves nothing.
    public mutating func take(line: UnsafeRawBufferPointer) {
        guard let arrival = Recording.arrival(of: line), SightingLimits.timestampRange.contains(arrival.received) else { return }
        let origin = self.origin ?? arrival.received
        self.origin = origin
        guard case .sightings(let node) = Topics.nodeMessage(in: arrival.topic), let beacon = anchors[node] else { return }
        var scanned = scratch
        scratch = []
        defer { scratch = scanned }
        guard case .success(let header) = SightingBatchDecoder.scan(line, topicNode: node, into: &scanned) else { return }
        clocks[node, default: NodeClock()].observe(sent: header.sent, arrival: arrival.received)
        let correction = clocks[node]?.correction(threshold: skewThreshold) ?? 0
        for sighting in scanned {
            let found: Double??
            switch sighting.id {
            case .bytes(let range): found = devices.value(for: UnsafeRawBufferPointer(rebasing: line[range]))
            case .text(let text): found = devices.value(for: text)
            }
            guard let registeredTx = found else { continue }
            let time = TimeBounds.difference(min(TimeBounds.sum(sighting.ts, correction), arrival.received), origin)
            guard stays.contains(where: { $0.beacon == beacon && time >= $0.from + Self.trim && time <= $0.to - Self.trim }) else { continue }
            let tx = registeredTx ?? sighting.tx.map(Double.init) ?? ObservationMatcher.defaultTx
            readings[node, default: []].append(tx - Double(sighting.rssi))
        }
    }

    /// The figures of every node anchored at a stay's beacon, by node key. Offsets are given once
    /// two nodes or more have `minimumReadings`; nodes with fewer have none.
    public func figures() -> [Figure] {
        var figures = anchors.sorted { $0.key < $1.key }.map { node, beacon in
            let losses = readings[node] ?? []
            let spread = losses.quantile(0.75).flatMap { upper in losses.quantile(0.25).map { upper - $0 } }
            return Figure(node: node, beacon: beacon, readings: losses.count, median: losses.steppedMedian(), spread: spread, offset: nil)
        }
        let medians = figures.filter(\.hasEnoughReadings).compactMap(\.median)
        guard medians.count >= 2, let reference = medians.median() else { return figures }
        for index in figures.indices where figures[index].hasEnoughReadings {
            figures[index].offset = figures[index].median.map { $0 - reference }
        }
        return figures
    }
}
