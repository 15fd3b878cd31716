/// What the aggregator knows of its fleet's health, fed by the pipeline as messages arrive: when
/// each registered beacon (with a radio identity) and tag was last heard by any registered node,
/// with its last Eddystone TLM (battery, temperature, uptime); and for each registered node, its
/// status, its last message and batch, its rates and its clock. Only registered things have an
/// entry, made when the registry names them and dropped when it no longer does: an unregistered
/// identity is looked up and forgotten, never kept. `report(at:)` says what is wrong. While
/// aggregators share the venue, each hears its shards' radios and adds the others' parts.
///
/// Tags of users who are incognito are neither updated nor reported while they are.
public struct FleetHealth: Sendable {
    /// The thresholds; each is an aggregator flag.
    public struct Configuration: Sendable, Equatable {
        /// A battery whose last TLM reading is below this, mV, is low (`--low-battery`): 2.5 V is
        /// near the end of a 3 V lithium coin cell (CR2032, CR2450), which reads 2.9–3.0 V for most
        /// of its life, and leaves some weeks in a pair of AA cells (1.25 V each).
        public var lowBattery = 2_500
        /// ... and is no longer low once a reading is this much above the threshold, mV, so that a
        /// reading that wavers around it does not make and clear the problem again and again.
        public var batteryHysteresis = 100
        /// A beacon or tag not heard for longer than this, ms, is silent (`--silent-after`).
        public var silentAfter: Int64 = 600_000
        /// A node from which nothing (batch, stats, status) came for longer than this, ms, is
        /// down (`--node-down-after`).
        public var nodeDownAfter: Int64 = 60_000
        /// A node whose clock is off by more than this, ms, is skewed (`--max-skew`).
        public var maxSkew: Int64 = 2_000
        /// The report is published again at least this often, ms (`--health-interval`).
        public var interval: Int64 = 60_000
        /// Sightings per second are counted over windows of this length, ms.
        public var rateWindow: Int64 = 10_000

        public init() {}

        var thresholds: FleetReport.Thresholds {
            FleetReport.Thresholds(lowBattery: lowBattery, silentAfter: silentAfter, nodeDownAfter: nodeDownAfter, maxSkew: maxSkew, interval: interval)
        }
    }

    /// A radio heard by identity: a beacon's, a tag's, or both.
    struct Radio: Sendable {
        var identity: String
        /// Since when it is watched, ms: the start, or when the registry added it.
        var since: Int64
        var lastHeard: Int64?
        /// Until when its user is incognito (tags); nothing is taken until then.
        var incognitoUntil: Int64?
        /// Its last telemetry, kept apart (most tags never send any): a word per radio without.
        private var sent: SentTelemetry?

        init(identity: String, since: Int64) {
            self.identity = identity
            self.since = since
        }

        /// What its last TLM said.
        var telemetry: Telemetry {
            get { sent?.telemetry ?? Telemetry() }
            set { sent = SentTelemetry(newValue) }
        }

        var batteryMillivolts: Int? { sent?.telemetry.batteryMillivolts }
        var batteryAt: Int64? { sent?.telemetry.batteryAt }
        var lowBattery: Bool { sent?.telemetry.lowBattery ?? false }

        /// A radio's last Eddystone TLM, as the health keeps it.
        struct Telemetry: Sendable {
            var batteryMillivolts: Int?
            var batteryAt: Int64?
            var temperature: Double?
            var uptime: Double?
            var lowBattery = false
        }

        /// Telemetry behind a reference, replaced whole on each change.
        private final class SentTelemetry: Sendable {
            let telemetry: Telemetry

            init(_ telemetry: Telemetry) {
                self.telemetry = telemetry
            }
        }

        func isIncognito(at time: Int64) -> Bool {
            incognitoUntil.map { time < $0 } ?? false
        }
    }

    /// A registered node, fixed or carried.
    struct NodeEntry: Sendable {
        var since: Int64
        var carried = false
        /// Until when the user carrying it is incognito.
        var incognitoUntil: Int64?
        var lastHeard: Int64?
        var lastBatch: Int64?
        var offline = false
        var reportsPerSecond: Double?
        var windowStart: Int64?
        var windowSightings = 0
        /// Over the last whole window; nil before one has passed.
        var sightingsPerSecond: Double?
        /// What to add to its clock to get the aggregator's, ms (`NodeClock.offset`).
        var clockOffset: Int64?

        init(since: Int64) {
            self.since = since
        }

        /// A batch of `sightings` arrived at `time`; its rate is measured over `rateWindow`.
        mutating func batch(at time: Int64, sightings: Int, clockOffset: Int64?, rateWindow: Int64) {
            lastHeard = max(lastHeard ?? time, time)
            lastBatch = max(lastBatch ?? time, time)
            if let start = windowStart, TimeBounds.difference(time, start) >= rateWindow {
                sightingsPerSecond = Double(windowSightings) * 1000 / Double(TimeBounds.difference(time, start))
                windowStart = time
                windowSightings = 0
            } else if windowStart == nil {
                windowStart = time
            }
            windowSightings += sightings
            if let clockOffset { self.clockOffset = clockOffset }
        }

        func isIncognito(at time: Int64) -> Bool {
            incognitoUntil.map { time < $0 } ?? false
        }
    }

    public let configuration: Configuration
    /// By identity.
    var radios: [Radio] = []
    /// The radios of beacons, by identity; a tag's is found by its device's number.
    var beaconRadios = IdentityTable<Int>([])
    /// Each registered device's radio, by its number (`Registry.devicesInIdentityOrder`); -1 for a
    /// scanner (`node:`), which is a node.
    var deviceRadios: [Int32] = []
    /// Beacon keys with their radio, by key.
    var beacons: [(key: String, radio: Int)] = []
    /// Tags' radios, by identity.
    var tags: [Int] = []
    var nodes: [String: NodeEntry] = [:]
    /// Sharing the venue with other aggregators: the shards whose sightings come here (nil: all),
    /// of the registry's count, and the other aggregators' parts, by aggregator.
    var owned: ShardSet?
    var shardCount = Shards.one
    var parts: [String: Part] = [:]

    /// Health for `registry`'s things, watched from `start` (ms).
    public init(configuration: Configuration, registry: Registry, start: Int64) {
        self.configuration = configuration
        replaceRegistry(registry, at: start)
    }

    /// Swaps in a new registry at `time`: what it still names keeps what was heard of it, what it
    /// adds is watched from `time`, what it dropped is forgotten.
    public mutating func replaceRegistry(_ registry: Registry, at time: Int64) {
        shardCount = registry.shards
        var old: [String: Radio] = [:]
        for radio in radios { old[radio.identity] = radio }
        let beaconIdentities = Set(registry.beacons.values.compactMap { beacon in beacon.identity.flatMap(Self.exactIdentity) })
        let devices = registry.devicesInIdentityOrder
        let identities = beaconIdentities.union(devices.lazy.filter { !$0.identity.hasPrefix("node:") }.map(\.identity))
        radios = identities.sorted().map { identity in
            var radio = old[identity] ?? Radio(identity: identity, since: time)
            radio.incognitoUntil = nil
            return radio
        }
        beaconRadios = IdentityTable(beaconIdentities.compactMap { identity in radio(for: identity).map { (identity, $0) } })
        beacons = registry.beacons.values.compactMap { beacon in
            beacon.identity.flatMap(Self.exactIdentity).flatMap { radio(for: $0) }.map { (beacon.key, $0) }
        }.sorted { $0.key < $1.key }
        deviceRadios = devices.map { device in device.identity.hasPrefix("node:") ? -1 : radio(for: device.identity).map(Int32.init) ?? -1 }
        tags = deviceRadios.filter { $0 >= 0 }.map(Int.init).sorted()
        for (number, device) in devices.enumerated() where deviceRadios[number] >= 0 {
            radios[Int(deviceRadios[number])].incognitoUntil = registry.users[device.user]?.incognitoUntil
        }

        // Scanners registered as devices are carried by their user.
        var carriers: [String: String] = [:]
        for device in registry.devices.values where device.identity.hasPrefix("node:") {
            carriers[String(device.identity.dropFirst(5))] = device.user
        }
        var entries: [String: NodeEntry] = [:]
        for key in Set(registry.nodes.keys).union(carriers.keys) {
            var entry = nodes[key] ?? NodeEntry(since: time)
            entry.carried = carriers[key] != nil
            entry.incognitoUntil = carriers[key].flatMap { registry.users[$0]?.incognitoUntil }
            entries[key] = entry
        }
        nodes = entries
    }

    /// A registered node heard `identity` at `time` (its corrected timestamp), with the
    /// telemetry the sighting carried: taken when the identity is a registered beacon's or tag's.
    public mutating func heard(_ identity: String, at time: Int64, telemetry: Telemetry?) {
        guard let index = radio(for: identity) else { return }
        heard(index, at: time, telemetry: telemetry)
    }

    /// `heard(_:at:telemetry:)` for a scanned identity: the registered device numbered `device`
    /// (`Registry.devicesInIdentityOrder`, as the observation matcher finds it), else a beacon's
    /// identity looked up by its bytes in `payload`.
    public mutating func heard(device: Int?, _ identity: TextSpan, in payload: UnsafeRawBufferPointer, at time: Int64, telemetry: Telemetry?) {
        var index: Int?
        if let device, deviceRadios.indices.contains(device), deviceRadios[device] >= 0 {
            index = Int(deviceRadios[device])
        } else {
            index = switch identity {
            case .bytes(let range): beaconRadios.value(for: UnsafeRawBufferPointer(rebasing: payload[range]))
            case .text(let text): beaconRadios.value(for: text)
            }
        }
        guard let index else { return }
        heard(index, at: time, telemetry: telemetry)
    }

    /// The radio of `identity`, found by halving `radios` (sorted by identity): for the few lookups
    /// by text, so that no second table of every tag's identity is kept beside the matcher's.
    func radio(for identity: String) -> Int? {
        var low = 0
        var high = radios.count
        while low < high {
            let middle = (low + high) / 2
            if radios[middle].identity < identity { low = middle + 1 } else { high = middle }
        }
        return low < radios.count && radios[low].identity == identity ? low : nil
    }

    private mutating func heard(_ index: Int, at time: Int64, telemetry: Telemetry?) {
        if radios[index].isIncognito(at: time) { return }
        radios[index].lastHeard = max(radios[index].lastHeard ?? time, time)
        guard let telemetry, !telemetry.encrypted, radios[index].batteryAt.map({ $0 <= time }) ?? true,
              telemetry.batteryMillivolts != nil || telemetry.temperature != nil || telemetry.uptime != nil else { return }
        var kept = radios[index].telemetry
        if let battery = telemetry.batteryMillivolts {
            kept.batteryMillivolts = battery
            kept.batteryAt = time
            if battery < configuration.lowBattery {
                kept.lowBattery = true
            } else if battery >= configuration.lowBattery + configuration.batteryHysteresis {
                kept.lowBattery = false
            }
        }
        if let temperature = telemetry.temperature { kept.temperature = temperature }
        if let uptime = telemetry.uptime { kept.uptime = uptime }
        radios[index].telemetry = kept
    }

    /// A batch of `sightings` from registered `node` arrived at `time`; `clockOffset` is the
    /// node's clock estimate after it (`NodeClock.offset`).
    public mutating func batch(from node: String, at time: Int64, sightings: Int, clockOffset: Int64?) {
        // Changed where it lies: one lookup (foreign nodes send a batch per sighting).
        guard let index = nodes.index(forKey: node), !nodes.values[index].isIncognito(at: time) else { return }
        nodes.values[index].batch(at: time, sightings: sightings, clockOffset: clockOffset, rateWindow: configuration.rateWindow)
    }

    /// Registered `node`'s stats (its heartbeat) arrived at `time`, saying `reportsPerSecond`.
    public mutating func stats(from node: String, at time: Int64, reportsPerSecond: Double?) {
        guard var entry = nodes[node], !entry.isIncognito(at: time) else { return }
        entry.lastHeard = max(entry.lastHeard ?? time, time)
        if let reportsPerSecond { entry.reportsPerSecond = reportsPerSecond }
        nodes[node] = entry
    }

    /// Registered `node`'s retained status arrived at `time`: online or offline.
    public mutating func status(of node: String, online: Bool, at time: Int64) {
        guard var entry = nodes[node], !entry.isIncognito(at: time) else { return }
        entry.offline = !online
        if online { entry.lastHeard = max(entry.lastHeard ?? time, time) }
        nodes[node] = entry
    }

    /// `identity` when it names one radio, nil for a region (`ibeacon:<uuid>`, `ibeacon:<uuid>:<major>`
    /// and the like cover many beacons, whose batteries cannot be told apart).
    static func exactIdentity(_ identity: String) -> String? {
        ((try? Identity(parsing: identity, allowRegion: true))?.isRegion ?? false) ? nil : identity
    }
}
