/// Reading a published report back (`presencectl health`, `user forget`), with any JSON decoder:
/// the members `encoded()` writes; unknown members are ignored.
extension FleetReport: Decodable {
    private enum Keys: String, CodingKey {
        case v, at, thresholds, problems, beacons, tags, nodes, shards
        case lowBattery = "low_battery_mv", silentAfter = "silent_after_ms", nodeDownAfter = "node_down_after_ms", maxSkew = "max_skew_ms"
        case interval = "interval_ms"
        case kind, beacon, tag, node, id, state, carried
        case batteryMillivolts = "battery_mv", batteryAt = "battery_at", lastHeard = "last_heard", lastBatch = "last_batch", skew = "skew_ms"
        case temperature, uptime = "uptime_s", sightingsPerSecond = "sightings_per_s", reportsPerSecond = "reports_per_s"
    }

    public init(from decoder: any Decoder) throws {
        let report = try decoder.container(keyedBy: Keys.self)
        guard try report.decode(Int.self, forKey: .v) == 1 else {
            throw DecodingError.dataCorruptedError(forKey: .v, in: report, debugDescription: "expected version 1")
        }
        at = try report.decode(Int64.self, forKey: .at)
        let limits = try report.nestedContainer(keyedBy: Keys.self, forKey: .thresholds)
        thresholds = Thresholds(lowBattery: try limits.decode(Int.self, forKey: .lowBattery), silentAfter: try limits.decode(Int64.self, forKey: .silentAfter),
                                nodeDownAfter: try limits.decode(Int64.self, forKey: .nodeDownAfter), maxSkew: try limits.decode(Int64.self, forKey: .maxSkew),
                                interval: try limits.decode(Int64.self, forKey: .interval))
        problems = try Self.each(report, .problems) { item in
            let subject: Problem.Subject = if let key = try item.decodeIfPresent(String.self, forKey: .beacon) {
                .beacon(key)
            } else if let identity = try item.decodeIfPresent(String.self, forKey: .tag) {
                .tag(identity)
            } else {
                .node(try item.decode(String.self, forKey: .node))
            }
            return Problem(kind: try item.decode(Problem.Kind.self, forKey: .kind), subject: subject,
                           batteryMillivolts: try item.decodeIfPresent(Int.self, forKey: .batteryMillivolts),
                           lastHeard: try item.decodeIfPresent(Int64.self, forKey: .lastHeard), state: try item.decodeIfPresent(Node.State.self, forKey: .state),
                           skew: try item.decodeIfPresent(Int64.self, forKey: .skew))
        }
        beacons = try Self.each(report, .beacons) { item in
            Beacon(key: try item.decode(String.self, forKey: .beacon), identity: try item.decode(String.self, forKey: .id), radio: try Self.radio(item))
        }
        tags = try Self.each(report, .tags) { item in
            Tag(identity: try item.decode(String.self, forKey: .id), radio: try Self.radio(item))
        }
        nodes = try Self.each(report, .nodes) { item in
            Node(key: try item.decode(String.self, forKey: .node), state: try item.decode(Node.State.self, forKey: .state),
                 carried: try item.decodeIfPresent(Bool.self, forKey: .carried) ?? false, lastHeard: try item.decodeIfPresent(Int64.self, forKey: .lastHeard),
                 lastBatch: try item.decodeIfPresent(Int64.self, forKey: .lastBatch),
                 sightingsPerSecond: try item.decodeIfPresent(Double.self, forKey: .sightingsPerSecond) ?? 0,
                 reportsPerSecond: try item.decodeIfPresent(Double.self, forKey: .reportsPerSecond), skew: try item.decodeIfPresent(Int64.self, forKey: .skew))
        }
        shards = try report.decodeIfPresent([Int].self, forKey: .shards)
    }

    /// Each object of the array under `key`, made into a value by `make`.
    private static func each<T>(_ container: KeyedDecodingContainer<Keys>, _ key: Keys,
                                _ make: (KeyedDecodingContainer<Keys>) throws -> T) throws -> [T] {
        var array = try container.nestedUnkeyedContainer(forKey: key)
        var values: [T] = []
        while !array.isAtEnd {
            values.append(try make(try array.nestedContainer(keyedBy: Keys.self)))
        }
        return values
    }

    private static func radio(_ item: KeyedDecodingContainer<Keys>) throws -> Radio {
        Radio(lastHeard: try item.decodeIfPresent(Int64.self, forKey: .lastHeard), batteryMillivolts: try item.decodeIfPresent(Int.self, forKey: .batteryMillivolts),
              batteryAt: try item.decodeIfPresent(Int64.self, forKey: .batteryAt), temperature: try item.decodeIfPresent(Double.self, forKey: .temperature),
              uptime: try item.decodeIfPresent(Double.self, forKey: .uptime))
    }
}

extension FleetReport.Problem.Kind: Decodable {}
extension FleetReport.Node.State: Decodable {}
