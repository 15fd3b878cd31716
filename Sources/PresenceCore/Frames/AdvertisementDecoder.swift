/// Turns advertising reports into the contract's sightings, by the policy in `Options`. A value
/// type with state (canonical texts cached per advertiser, telemetry waiting for its beacon,
/// extended-report fragments), and pure: the caller passes each report's time.
///
/// - Beacon frames become `ibeacon:`, `altbeacon:` and `eddystone:` sightings whatever the address.
/// - Other advertisers (Eddystone URL, EID, telemetry-only, no beacon frame) become `mac:` sightings,
///   by default only from stable addresses.
/// - Eddystone telemetry heard from an address is attached to the next identifying sighting from
///   that address (beacons interleave UID and TLM frames). A TLM from an address that sent no
///   identifying frame within `telemetryMaxAge` is published as that advertiser's `mac:` sighting.
public struct AdvertisementDecoder: Sendable {
    private struct IdentityKey: Hashable {
        let tag: UInt8
        let high: UInt128
        let low: UInt64
    }

    private struct CachedIdentity {
        let id: String
        let verdict: DropReason?
        /// The address it was last heard from, and that address as published.
        var address: UInt64
        var addr: String
        /// When it was last heard.
        var lastSeen: Int64
    }

    private struct PendingTelemetry {
        var telemetry: Telemetry
        var heardAt: Int64
    }

    public let options: Options
    public private(set) var statistics = Statistics()
    private let allow: [String]
    private let deny: [String]
    private var identities: [IdentityKey: CachedIdentity] = [:]
    /// The beacon identity each address last sent, changed only when a beacon changes address.
    private var beaconAtAddress: [UInt64: IdentityKey] = [:]
    private var pendingTelemetry: [UInt64: PendingTelemetry] = [:]
    private var reassembler = ExtendedAdvertisingReassembler()

    public init(options: Options = Options()) {
        self.options = options
        allow = options.allow.map { $0.lowercased() }
        deny = options.deny.map { $0.lowercased() }
    }

    /// Extended-advertising chains given up on (too long, or too many at once).
    public var discardedFragmentChains: Int { reassembler.discarded }

    /// Decodes every advertising report in one HCI event packet, appending the sightings.
    public mutating func decode(event: ArraySlice<UInt8>, ts: Int64, into sightings: inout [Sighting]) {
        var reports = HCIAdvertisingReports(event: event)
        while let report = reports.next() {
            if let sighting = decode(report, ts: ts) { sightings.append(sighting) }
        }
    }

    /// The sighting one report makes, or nil when it makes none (dropped by policy, telemetry held
    /// for its beacon, or a fragment of an advertisement still incomplete).
    public mutating func decode(_ report: AdvertisingReport, ts: Int64) -> Sighting? {
        statistics.reports += 1
        var report = report
        if !report.properties.contains(.legacy), report.dataStatus == .incomplete || reassembler.pendingCount > 0 {
            guard let whole = reassembler.add(report) else {
                statistics.fragmentsHeld += 1
                return nil
            }
            report = whole
        }
        let contents = AdvertisementContents(report.data)
        let frame = contents.frame
        statistics.frameCounts[frame.kind.rawValue] += 1
        let advertiserKey = UInt64(report.addressTypeByte) << 48 | report.address.rawValue
        if let telemetry = contents.telemetry {
            remember(telemetry, from: advertiserKey, at: ts)
        }

        guard let rssi = report.rssi else { return drop(.rssiUnavailable) }
        guard SightingLimits.rssiRange.contains(Int(rssi)) else { return drop(.rssiOutOfRange) }
        if let minimum = options.minimumRSSI, Int(rssi) < minimum { return drop(.belowMinimumRSSI) }

        let key: IdentityKey
        var telemetry: Telemetry?
        switch frame {
        case .iBeacon(let beacon):
            key = IdentityKey(tag: 1, high: beacon.uuid, low: UInt64(beacon.major) << 16 | UInt64(beacon.minor))
        case .altBeacon(let beacon):
            key = IdentityKey(tag: 2, high: beacon.id1, low: UInt64(beacon.id2) << 16 | UInt64(beacon.id3))
        case .eddystoneUID(let uid):
            key = IdentityKey(tag: 3, high: uid.namespace, low: uid.instance)
        case .eddystoneURL, .eddystoneEID, .eddystoneTLM, .eddystoneEncryptedTLM, .other:
            if frame.isTelemetry {
                if identifiedRecently(advertiserKey, address: report.address, at: ts) {
                    statistics.telemetryHeld += 1
                    return nil
                }
                telemetry = contents.telemetry
            } else if report.isScanResponse, !options.includeScanResponses {
                return drop(.scanResponse)
            }
            if let reason = addressRefusal(report.addressType) { return drop(reason) }
            key = IdentityKey(tag: 4, high: 0, low: report.address.rawValue)
        }

        let identity = cachedIdentity(key, frame: frame, address: report.address, advertiser: advertiserKey, at: ts)
        if let verdict = identity.verdict { return drop(verdict) }
        if frame.isIdentifying, !pendingTelemetry.isEmpty {
            telemetry = takeTelemetry(for: advertiserKey, at: ts)
        }
        statistics.sightings += 1
        if telemetry != nil { statistics.telemetryAttached += 1 }
        return Sighting(ts: ts, id: identity.id, rssi: Int(rssi), tx: frame.txPowerAt1m, addr: identity.addr, telemetry: telemetry)
    }

    private mutating func drop(_ reason: DropReason) -> Sighting? {
        statistics.dropCounts[reason.rawValue] += 1
        return nil
    }

    private func addressRefusal(_ type: AddressType) -> DropReason? {
        switch options.addresses {
        case .none: return .addressesOff
        case .all: return type == .anonymous ? .anonymousAddress : nil
        case .stableOnly:
            if type.isStable { return nil }
            switch type {
            case .anonymous: return .anonymousAddress
            case .resolvablePrivate, .nonResolvablePrivate: return .privateAddress
            default: return .unusableAddress
            }
        }
    }

    // MARK: Canonical texts, once per advertiser

    /// The cached identity for `key`, made on first sight; its `addr` follows the latest address,
    /// and beacons are noted against the address they were heard from.
    private mutating func cachedIdentity(
        _ key: IdentityKey, frame: BeaconFrame, address: BluetoothAddress, advertiser: UInt64, at ts: Int64
    ) -> CachedIdentity {
        if let index = identities.index(forKey: key) {
            identities.values[index].lastSeen = ts
            if identities.values[index].address != address.rawValue {
                identities.values[index].address = address.rawValue
                identities.values[index].addr = published(address).description
                if frame.isIdentifying { beaconAtAddress[advertiser] = key }
            }
            return identities.values[index]
        }
        if identities.count >= max(1, options.cacheCapacity) {
            identities.removeAll(keepingCapacity: true)
            beaconAtAddress.removeAll(keepingCapacity: true)
        }
        let shown = published(address)
        let id = frame.identity(address: shown)
        let identity = CachedIdentity(id: id, verdict: verdict(for: id), address: address.rawValue, addr: shown.description, lastSeen: ts)
        identities[key] = identity
        if frame.isIdentifying { beaconAtAddress[advertiser] = key }
        return identity
    }

    /// The address as published: itself, or its pseudonym when hashing is on.
    private func published(_ address: BluetoothAddress) -> BluetoothAddress {
        options.hashing?.pseudonym(for: address) ?? address
    }

    private func verdict(for id: String) -> DropReason? {
        if deny.contains(where: { id.hasPrefix($0) }) { return .denied }
        if !allow.isEmpty, !allow.contains(where: { id.hasPrefix($0) }) { return .notAllowed }
        return nil
    }

    // MARK: Telemetry waiting for its beacon

    private mutating func remember(_ telemetry: Telemetry, from key: UInt64, at ts: Int64) {
        if pendingTelemetry.count >= max(1, options.cacheCapacity), pendingTelemetry[key] == nil {
            let horizon = ts - options.telemetryMaxAge
            pendingTelemetry = pendingTelemetry.filter { $0.value.heardAt >= horizon }
            if pendingTelemetry.count >= options.cacheCapacity { pendingTelemetry.removeAll(keepingCapacity: true) }
        }
        pendingTelemetry[key] = PendingTelemetry(telemetry: telemetry, heardAt: ts)
    }

    /// The telemetry waiting for `key`'s identifying sighting, if it is fresh; taken once.
    private mutating func takeTelemetry(for key: UInt64, at ts: Int64) -> Telemetry? {
        guard let pending = pendingTelemetry.removeValue(forKey: key) else { return nil }
        return ts - pending.heardAt <= options.telemetryMaxAge ? pending.telemetry : nil
    }

    /// Whether the beacon last heard from this address was heard within `telemetryMaxAge`, still
    /// from this address.
    private func identifiedRecently(_ key: UInt64, address: BluetoothAddress, at ts: Int64) -> Bool {
        guard let beacon = beaconAtAddress[key], let identity = identities[beacon] else { return false }
        return identity.address == address.rawValue && ts - identity.lastSeen <= options.telemetryMaxAge
    }
}
