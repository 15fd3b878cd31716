extension PresencePipeline {
    /// The dialects of foreign reports: one advertiser per message.
    public enum ForeignDialect: Sendable, Equatable {
        /// `ESPresenseReport`.
        case espresense
        /// `GatewayAdvertisement` (OpenMQTTGateway, Theengs Gateway).
        case gateway
    }

    /// A foreign node's report of one advertiser arrived at `receivedAt` from the room or gateway
    /// named `name` (the topic's bytes; `ForeignTopics.nodeKey(for:)` gives its node): the clock
    /// moves to the arrival (while catching up, no further than the nodes awaited allow), which is
    /// also the sighting's time (these reports carry none), then the sighting is matched as a
    /// native node's would be. Its stated power at 1 m stands where
    /// the registry has none; its distances are not read (the engine makes its own).
    ///
    /// While other aggregators share the venue, every one of them hears every foreign report
    /// (they cannot be split by shard at the node): each takes the observations of its own shards,
    /// and counts the report in the fleet's health only when it owns the sighting's shard (shard 0
    /// for one that matched nothing), so that the parts add up to the node's rate.
    public mutating func receiveForeign(_ payload: UnsafeRawBufferPointer, dialect: ForeignDialect, node name: UnsafeRawBufferPointer,
                                        at receivedAt: Int64) -> Outcome {
        let receivedAt = TimeBounds.clamped(receivedAt)
        counters.batches += 1
        guard let key = ForeignTopics.nodeKey(for: name) else {
            strangers.record(Substring(String(decoding: name, as: UTF8.self)), reason: .badNodeName, at: receivedAt)
            return Outcome(events: advanceClock(to: heldAt(receivedAt)), refusal: .stranger(.badNodeName))
        }
        guard isRegistered(node: key) else {
            strangers.record(Substring(key), reason: .unregisteredNode, at: receivedAt)
            return Outcome(events: advanceClock(to: heldAt(receivedAt)), refusal: .stranger(.unregisteredNode))
        }
        var identity = CanonicalIdentityBuffer()
        swap(&identity, &foreignIdentity)
        defer { swap(&identity, &foreignIdentity) }
        let read = switch dialect {
        case .espresense: ESPresenseReport.read(payload, identity: &identity)
        case .gateway: GatewayAdvertisement.read(payload, identity: &identity)
        }
        let sighting: ForeignSighting
        switch read {
        case .failure(let rejection):
            counters.rejectedBatches[rejection.reason, default: 0] += 1
            return Outcome(events: advanceClock(to: heldAt(receivedAt)), refusal: .foreign(rejection))
        case .success(let read):
            sighting = read
        }
        var outcome = Outcome(events: advanceClock(to: heldAt(receivedAt)))
        takenUpTo = max(takenUpTo, receivedAt)
        engine.nodeHeard(key, at: receivedAt, heartbeat: false)
        counters.sightings += 1
        let heardBy = matcher.node(key)
        let owned = owned
        identity.bytes.withUnsafeBytes { bytes in
            let scanned = SightingBatchDecoder.Scanned(ts: receivedAt, id: .bytes(0 ..< bytes.count), rssi: sighting.rssi, tx: sighting.tx, addr: nil)
            let device = matcher.device(scanned.id, in: bytes)
            fleet?.heard(device: device, scanned.id, in: bytes, at: receivedAt, telemetry: nil)
            let shard = ingest(scanned, device: device, in: bytes, heardBy: heardBy, node: key, at: receivedAt, owned: owned, into: &outcome) ?? 0
            if owned?.contains(shard) ?? true { fleet?.batch(from: key, at: receivedAt, sightings: 1, clockOffset: nil) }
        }
        if selfCalibration?.refit(at: receivedAt) != nil, let calibrated = selfCalibration?.calibrated(registry) {
            matcher = ObservationMatcher(registry: calibrated)
        }
        return outcome
    }
}
