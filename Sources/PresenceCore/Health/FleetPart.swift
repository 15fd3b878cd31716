/// Another aggregator's part of the fleet's health while several share the venue: the health report
/// it publishes retained on `{p}/v1/health/parts/{aggregator}`, read as far as merging it needs.
/// It lists the beacons and tags of the shards it owns (as it heard them), and each node's batches
/// of those shards.
struct FleetPart: Sendable {
    /// A beacon or tag of the part's shards, by identity.
    struct Radio: Sendable {
        var identity: String
        var radio: FleetReport.Radio
        /// Whether the part says its battery is low.
        var lowBattery = false
    }

    /// When the part was made, by its aggregator's clock, ms.
    var at: Int64
    var shards: [Int]
    var radios: [Radio]
    /// By node key: only what the part's own shards' batches say (last heard and last batch,
    /// sightings per second, clock skew).
    var nodes: [String: FleetReport.Node]

    /// At most this many radios and nodes are read from one part; a larger one is refused.
    static let maximumEntries = 4_000_000

    /// The part a payload holds; nil for one that is not a part (no `shards`, not a report, too big).
    init?(payload: UnsafeRawBufferPointer) {
        var at: Int64?
        var shards: [Int]?
        var radios: [Radio] = []
        var nodes: [String: FleetReport.Node] = [:]
        var lowBeacons: Set<String> = []
        var lowTags: Set<String> = []
        var beaconKeys: [String: Int] = [:]
        var reader = JSONReader(payload)
        do throws(JSONReader.Failure) {
            try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
                if key.is("at"), try reader.peekKind() == .number {
                    at = try reader.readInteger()
                } else if key.is("shards"), try reader.peekKind() == .array {
                    var read: [Int] = []
                    try reader.readArray { (reader: inout JSONReader) throws(JSONReader.Failure) in
                        guard try reader.peekKind() == .number else { return try reader.skipValue() }
                        if let shard = try reader.readInteger(), (0 ..< Int64(Shards.maximum)).contains(shard) { read.append(Int(shard)) }
                    }
                    shards = read
                } else if key.is("problems"), try reader.peekKind() == .array {
                    try reader.readArray { (reader: inout JSONReader) throws(JSONReader.Failure) in
                        let (kind, subject) = try Self.problem(&reader)
                        guard kind == FleetReport.Problem.Kind.lowBattery.rawValue, let subject else { return }
                        switch subject {
                        case .beacon(let key): lowBeacons.insert(key)
                        case .tag(let identity): lowTags.insert(identity)
                        case .node: break
                        }
                    }
                } else if key.is("beacons") || key.is("tags"), try reader.peekKind() == .array {
                    let beacons = key.is("beacons")
                    try reader.readArray { (reader: inout JSONReader) throws(JSONReader.Failure) in
                        guard radios.count + nodes.count < Self.maximumEntries else { throw JSONReader.Failure(offset: 0, reason: "too many entries") }
                        let (beacon, radio) = try Self.radio(&reader)
                        guard let radio else { return }
                        if beacons, let beacon { beaconKeys[beacon] = radios.count }
                        radios.append(radio)
                    }
                } else if key.is("nodes"), try reader.peekKind() == .array {
                    try reader.readArray { (reader: inout JSONReader) throws(JSONReader.Failure) in
                        guard radios.count + nodes.count < Self.maximumEntries else { throw JSONReader.Failure(offset: 0, reason: "too many entries") }
                        if let node = try Self.node(&reader) { nodes[node.key] = node }
                    }
                } else {
                    try reader.skipValue()
                }
            }
            try reader.expectEnd()
        } catch {
            return nil
        }
        guard let at, let shards else { return nil }
        for key in lowBeacons { if let index = beaconKeys[key] { radios[index].lowBattery = true } }
        for index in radios.indices where lowTags.contains(radios[index].identity) { radios[index].lowBattery = true }
        self.at = at
        self.shards = shards
        self.radios = radios
        self.nodes = nodes
    }

    /// One problem's kind and subject.
    private static func problem(_ reader: inout JSONReader) throws(JSONReader.Failure) -> (String?, FleetReport.Problem.Subject?) {
        var kind: String?
        var subject: FleetReport.Problem.Subject?
        guard try reader.peekKind() == .object else {
            try reader.skipValue()
            return (nil, nil)
        }
        try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
            guard try reader.peekKind() == .string else { return try reader.skipValue() }
            if key.is("kind") {
                kind = try reader.readString()
            } else if key.is("beacon") {
                subject = .beacon(try reader.readString())
            } else if key.is("tag") {
                subject = .tag(try reader.readString())
            } else {
                try reader.skipValue()
            }
        }
        return (kind, subject)
    }

    /// One beacon's or tag's entry: its beacon key (beacons) and its radio; nil without an identity.
    private static func radio(_ reader: inout JSONReader) throws(JSONReader.Failure) -> (String?, Radio?) {
        var beacon: String?
        var identity: String?
        var radio = FleetReport.Radio()
        guard try reader.peekKind() == .object else {
            try reader.skipValue()
            return (nil, nil)
        }
        try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
            let kind = try reader.peekKind()
            if kind == .string, key.is("beacon") {
                beacon = try reader.readString()
            } else if kind == .string, key.is("id") {
                identity = try reader.readString()
            } else if kind == .number, key.is("last_heard") {
                radio.lastHeard = try reader.readInteger()
            } else if kind == .number, key.is("battery_mv") {
                radio.batteryMillivolts = try reader.readInteger().flatMap { Int(exactly: $0) }.map { min(max($0, 0), 65_535) }
            } else if kind == .number, key.is("battery_at") {
                radio.batteryAt = try reader.readInteger()
            } else if kind == .number, key.is("temperature") {
                radio.temperature = try Self.finite(reader.readDouble())
            } else if kind == .number, key.is("uptime_s") {
                radio.uptime = try Self.finite(reader.readDouble())
            } else {
                try reader.skipValue()
            }
        }
        return (beacon, identity.map { Radio(identity: $0, radio: radio) })
    }

    /// One node's entry; nil without a key.
    private static func node(_ reader: inout JSONReader) throws(JSONReader.Failure) -> FleetReport.Node? {
        var key: String?
        var node = FleetReport.Node(key: "", state: .unknown)
        guard try reader.peekKind() == .object else {
            try reader.skipValue()
            return nil
        }
        try reader.readObject { (reader: inout JSONReader, name: JSONKey) throws(JSONReader.Failure) in
            let kind = try reader.peekKind()
            if kind == .string, name.is("node") {
                key = try reader.readString()
            } else if kind == .number, name.is("last_heard") {
                node.lastHeard = try reader.readInteger()
            } else if kind == .number, name.is("last_batch") {
                node.lastBatch = try reader.readInteger()
            } else if kind == .number, name.is("sightings_per_s") {
                node.sightingsPerSecond = Self.finite(try reader.readDouble()).map { max($0, 0) } ?? 0
            } else if kind == .number, name.is("skew_ms") {
                node.skew = try reader.readInteger()
            } else {
                try reader.skipValue()
            }
        }
        guard let key else { return nil }
        node.key = key
        return node
    }

    private static func finite(_ value: Double) -> Double? {
        value.isFinite ? value : nil
    }
}
