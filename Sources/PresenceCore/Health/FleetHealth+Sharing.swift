/// Several aggregators sharing a venue: each hears the radios of its own shards, and the nodes'
/// batches of those shards. Each publishes its part (`part(at:)`, retained on
/// `{p}/v1/health/parts/{aggregator}`) and reads the others': what they heard of their radios
/// becomes what it knows of them, and their node figures add to its own, so that every
/// aggregator's report, page and metrics show the whole venue.
extension FleetHealth {
    /// Another aggregator's part, as far as the nodes go: when it was made, its shards, and what
    /// its shards' batches say of each registered node.
    struct Part: Sendable {
        var at: Int64
        var shards: [Int]
        var nodes: [String: FleetReport.Node]
    }

    /// From now on the sightings of `shards` come here (nil: every shard).
    public mutating func own(_ shards: ShardSet?) {
        owned = shards
    }

    /// Whether the sightings of radio `identity` come here.
    func hears(_ identity: String) -> Bool {
        guard let owned else { return true }
        return owned.contains(shardCount.shard(of: identity))
    }

    /// The part of aggregator `name` arrived: for each registered radio it lists, the later last
    /// heard and the newer battery reading of the two count; the node figures
    /// are kept for `report(at:)`. An empty payload (the part deleted) forgets it. False: `payload`
    /// is not a part.
    public mutating func absorb(part payload: UnsafeRawBufferPointer, from name: String) -> Bool {
        guard !payload.isEmpty else {
            parts[name] = nil
            return true
        }
        guard let part = FleetPart(payload: payload) else { return false }
        for entry in part.radios {
            guard let index = radio(for: entry.identity), !radios[index].isIncognito(at: part.at) else { continue }
            radios[index].absorb(entry)
        }
        // One part per aggregator: no more of them than there can be shards to own.
        guard parts[name] != nil || parts.count < Shards.maximum else { return true }
        parts[name] = Part(at: part.at, shards: part.shards, nodes: part.nodes.filter { nodes[$0.key] != nil })
        return true
    }

    /// The parts whose node figures count at `now`: for each shard not heard here, the part that
    /// claims it most recently, if made within two report intervals (an aggregator that died
    /// leaves its part behind; whoever took its shards claims them later).
    func liveParts(at now: Int64) -> [Part] {
        guard let owned, !parts.isEmpty else { return [] }
        var newest: [Int: (at: Int64, name: String)] = [:]
        for (name, part) in parts {
            for shard in part.shards where shard < shardCount.count && !owned.contains(shard) {
                if newest[shard].map({ part.at > $0.at || (part.at == $0.at && name < $0.name) }) ?? true { newest[shard] = (part.at, name) }
            }
        }
        return Set(newest.values.map(\.name)).sorted().compactMap { parts[$0] }
            .filter { TimeBounds.difference(now, $0.at) <= 2 * configuration.interval }
    }

    /// This aggregator's part at `now`: the beacons and tags of the shards it hears, the nodes with
    /// what its own batches say; nil when it hears every shard (it reports the whole venue then).
    public func part(at now: Int64) -> FleetReport? {
        guard let owned, !owned.isEmpty, !(0 ..< shardCount.count).allSatisfy(owned.contains) else { return nil }
        var report = report(at: now, radios: hears, merging: [])
        report.shards = owned.sorted
        return report
    }
}

extension FleetHealth.Radio {
    /// What another aggregator heard of this radio: the later last heard, and the newer battery
    /// reading with its temperature, uptime and whether the battery is low.
    mutating func absorb(_ entry: FleetPart.Radio) {
        if let heard = entry.radio.lastHeard { lastHeard = max(lastHeard ?? heard, heard) }
        guard let batteryAt = entry.radio.batteryAt, self.batteryAt.map({ $0 < batteryAt }) ?? true else { return }
        telemetry = Telemetry(batteryMillivolts: entry.radio.batteryMillivolts, batteryAt: batteryAt, temperature: entry.radio.temperature,
                              uptime: entry.radio.uptime, lowBattery: entry.lowBattery)
    }
}
