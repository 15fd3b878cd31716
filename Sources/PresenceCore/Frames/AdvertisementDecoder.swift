/// Turns advertising reports into the contract's sightings, by the policy in `Options`. A value
/// type with state (canonical texts cached per advertiser, telemetry waiting for its beacon,
/// extended-report fragments), and pure: the caller passes each report's time.
///
/// - Beacon frames become `ibeacon:`, `altbeacon:` and `eddystone:` sightings whatever the address.
/// - Other advertisers (Eddystone URL, EID, telemetry-only, no beacon frame) become `mac:` sightings,
///   by default only from stable addresses.
/// - Eddystone telemetry heard from an address is attached to the next identifying sighting from
///   that address (beacons interleave UID and TLM frames). A TLM from an address that sent no
///   identifying frame within `telemetryMaxAge` is published as that advertiser's `mac:` sighting,
///   and when it cannot be (a private address, a weak signal) it waits for an identifying frame.
public struct AdvertisementDecoder: Sendable {
    private typealias Key = IdentityCache.Key

    private struct PendingTelemetry {
        var telemetry: Telemetry
        var heardAt: Int64
    }

    public let options: Options
    public private(set) var statistics = Statistics()
    private let allow: [String]
    private let deny: [String]
    private var cache: IdentityCache
    /// The beacon each address last sent, changed only when a beacon appears or changes address.
    private var beaconAtAddress: [UInt64: Key] = [:]
    /// Telemetry from addresses whose beacon is not known yet.
    private var pendingTelemetry: [UInt64: PendingTelemetry] = [:]
    private var reassembler = ExtendedAdvertisingReassembler()

    public init(options: Options = Options()) {
        self.options = options
        allow = options.allow.map { $0.lowercased() }
        deny = options.deny.map { $0.lowercased() }
        cache = IdentityCache(capacity: options.cacheCapacity)
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
        if !report.properties.contains(.legacy), report.dataStatus == .incomplete || reassembler.pendingCount > 0 {
            guard let whole = reassembler.add(report) else {
                statistics.fragmentsHeld += 1
                return nil
            }
            return decodeWhole(whole, ts: ts)
        }
        return decodeWhole(report, ts: ts)
    }

    private mutating func decodeWhole(_ report: AdvertisingReport, ts: Int64) -> Sighting? {
        let contents = AdvertisementContents(report.data.span)
        let frame = contents.frame
        statistics.frameCounts[frame.kind.rawValue] += 1
        let advertiser = UInt64(report.addressTypeByte) << 48 | report.address.rawValue
        var telemetry = contents.telemetry

        let key: Key
        switch frame {
        case .iBeacon(let beacon):
            key = Key(tag: 1, high: beacon.uuid, low: UInt64(beacon.major) << 16 | UInt64(beacon.minor))
        case .altBeacon(let beacon):
            key = Key(tag: 2, high: beacon.id1, low: UInt64(beacon.id2) << 16 | UInt64(beacon.id3))
        case .eddystoneUID(let uid):
            key = Key(tag: 3, high: uid.namespace, low: uid.instance)
        case .eddystoneURL, .eddystoneEID, .eddystoneTLM, .eddystoneEncryptedTLM, .other:
            if let heard = telemetry {
                if let beacon = recentBeacon(at: advertiser, address: report.address, ts: ts) {
                    cache[beacon].telemetry = heard
                    cache[beacon].telemetryAt = ts
                    statistics.telemetryHeld += 1
                    return nil
                }
                pendingTelemetry[advertiser] = PendingTelemetry(telemetry: heard, heardAt: ts)
            }
            key = Key(tag: 4, high: 0, low: report.address.rawValue)
        }

        guard let rssi = report.rssi else { return drop(.rssiUnavailable) }
        guard SightingLimits.rssiRange.contains(Int(rssi)) else { return drop(.rssiOutOfRange) }
        if let minimum = options.minimumRSSI, Int(rssi) < minimum { return drop(.belowMinimumRSSI) }
        if !frame.isIdentifying {
            if report.isScanResponse, telemetry == nil, !options.includeScanResponses { return drop(.scanResponse) }
            if let reason = addressRefusal(report.addressType) { return drop(reason) }
        }

        let index = entry(for: key, frame: frame, address: report.address, advertiser: advertiser, ts: ts)
        if let verdict = cache[index].verdict { return drop(verdict) }
        if frame.isIdentifying {
            if telemetry == nil { telemetry = takeTelemetry(index, advertiser: advertiser, ts: ts) }
        } else if telemetry != nil {
            pendingTelemetry[advertiser] = nil
        }
        statistics.sightings += 1
        if telemetry != nil { statistics.telemetryAttached += 1 }
        // An anonymous advertiser (extended advertising without an address) has no address to show.
        let addr = report.addressTypeByte == 0xFF ? nil : cache[index].addr
        return Sighting(ts: ts, id: cache[index].id, rssi: Int(rssi), tx: frame.txPowerAt1m, addr: addr, telemetry: telemetry)
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

    /// Where the cache holds `key`, made on first sight; its `addr` follows the latest address, and
    /// beacons are noted against the address they were heard from.
    private mutating func entry(for key: Key, frame: BeaconFrame, address: BluetoothAddress, advertiser: UInt64, ts: Int64) -> Int {
        if let index = cache.find(key) {
            cache[index].lastSeen = ts
            if cache[index].address != address.rawValue {
                cache[index].address = address.rawValue
                cache[index].addr = published(address).description
                if frame.isIdentifying { note(key, at: advertiser) }
            }
            return index
        }
        let shown = published(address)
        let id = frame.identity(address: shown)
        let entry = IdentityCache.Entry(
            id: id, verdict: verdict(for: id), address: address.rawValue, addr: shown.description,
            lastSeen: ts, telemetry: nil, telemetryAt: 0)
        if frame.isIdentifying { note(key, at: advertiser) }
        return cache.insert(key, entry)
    }

    private mutating func note(_ beacon: Key, at advertiser: UInt64) {
        if beaconAtAddress.count >= 2 * max(1, options.cacheCapacity) {
            beaconAtAddress.removeAll(keepingCapacity: true)
        }
        beaconAtAddress[advertiser] = beacon
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

    /// The cache entry of the beacon heard from this address within `telemetryMaxAge`, if any.
    private func recentBeacon(at advertiser: UInt64, address: BluetoothAddress, ts: Int64) -> Int? {
        guard let beacon = beaconAtAddress[advertiser], let index = cache.find(beacon),
              cache[index].address == address.rawValue, ts - cache[index].lastSeen <= options.telemetryMaxAge
        else { return nil }
        return index
    }

    /// The fresh telemetry waiting for the beacon at `index`, held with it or heard from its
    /// address before it was known; taken once.
    private mutating func takeTelemetry(_ index: Int, advertiser: UInt64, ts: Int64) -> Telemetry? {
        if let held = cache[index].telemetry {
            cache[index].telemetry = nil
            return ts - cache[index].telemetryAt <= options.telemetryMaxAge ? held : nil
        }
        guard !pendingTelemetry.isEmpty, let pending = pendingTelemetry.removeValue(forKey: advertiser) else { return nil }
        return ts - pending.heardAt <= options.telemetryMaxAge ? pending.telemetry : nil
    }
}
