/// An ESPresense node's report of one device (`{prefix}/devices/{id}/{room}`), as its firmware
/// writes it (`BleFingerprint::report`): a JSON object with `id`, `rssi` and, when the device
/// states it, `rssi@1m`, among fields this reader skips (its distances may be a bare `nan`).
///
/// The `id` becomes a canonical identity where it carries the same information:
/// `iBeacon:{uuid}-{major}-{minor}` → `ibeacon:{uuid}:{major}:{minor}`,
/// `altBeacon:{id1}-{id2}-{id3}` → `altbeacon:…`, `eddy:{namespace}-{instance}` →
/// `eddystone:{namespace}:{instance}`, a bare 12-digit address → `mac:aa:bb:cc:dd:ee:ff`; any other
/// id (`irk:…`, `apple:…`, `name:…`, `known:…`...) → `espresense:{id}`, as written.
public enum ESPresenseReport {
    /// Reads `payload`, spelling the device's canonical identity into `identity`.
    public static func read(_ payload: UnsafeRawBufferPointer, identity: inout CanonicalIdentityBuffer) -> Result<ForeignSighting, ForeignRejection> {
        guard payload.count <= ForeignSighting.maximumBytes else { return .failure(.tooLarge(bytes: payload.count)) }
        var reader = JSONReader(payload, maximumDepth: 8)
        var id: TextSpan?
        var rssi: Int?
        var rssiSeen = false
        var tx: Int?
        do throws(JSONReader.Failure) {
            try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
                // By length first: most members are none of these.
                switch key.count {
                case 2 where key.is("id"):
                    if try reader.peekKind() == .string { id = try reader.readStringSpan() } else { try reader.skipValueAllowingNonFinite() }
                case 4 where key.is("rssi"):
                    rssiSeen = true
                    rssi = try reader.readDecibels(within: ForeignSighting.rssiRange)
                case 7 where key.is("rssi@1m"):
                    tx = try reader.readDecibels(within: ForeignSighting.rssiRange)
                default:
                    try reader.skipValueAllowingNonFinite()
                }
            }
            try reader.expectEnd()
        } catch {
            return .failure(.notJSON(error))
        }
        guard let id else { return .failure(.noIdentity) }
        guard rssiSeen else { return .failure(.noRSSI) }
        guard let rssi else { return .failure(.badRSSI) }
        identity.reset()
        guard id.withBytes(in: payload, { canonical($0, into: &identity) }) else { return .failure(.badIdentity) }
        return .success(ForeignSighting(rssi: rssi, tx: tx))
    }

    /// Spells ESPresense's `id` as a canonical identity.
    static func canonical(_ id: UnsafeRawBufferPointer, into identity: inout CanonicalIdentityBuffer) -> Bool {
        if let rest = id.dropping(prefix: "iBeacon:"), let second = canonicalTriple(rest) {
            // As ESPresense writes it (lower-case UUID, numbers without leading zeros): the same
            // bytes, with two separators changed.
            identity.append("ibeacon:")
            let start = identity.bytes.count
            identity.appendVerbatim(rest)
            identity.replace(at: start + 36, with: UInt8(ascii: ":"))
            identity.replace(at: start + second, with: UInt8(ascii: ":"))
            return true
        }
        if let rest = id.dropping(prefix: "iBeacon:") {
            identity.append("ibeacon:")
            if beaconTriple(rest, into: &identity) { return true }
        } else if let rest = id.dropping(prefix: "altBeacon:") {
            identity.append("altbeacon:")
            if beaconTriple(rest, into: &identity) { return true }
        } else if let rest = id.dropping(prefix: "eddy:") {
            identity.append("eddystone:")
            if eddystone(rest, into: &identity) { return true }
        } else if id.count == 12 {
            identity.append("mac:")
            if identity.appendAddress(id) { return true }
        }
        identity.reset()
        identity.append("espresense:")
        return identity.appendForeignID(id)
    }

    /// Where the dash before the minor is, when `text` is `{uuid}-{major}-{minor}` already spelled
    /// as an identity spells them: a lower-case dashed UUID, numbers from 0 to 65,535 without
    /// leading zeros. Nil otherwise (the general reading then decides).
    private static func canonicalTriple(_ text: UnsafeRawBufferPointer) -> Int? {
        guard text.count >= 40, text.count <= 48 else { return nil }
        for index in 0 ..< 36 {
            let byte = text[index]
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
            } else {
                guard (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f")) else { return nil }
            }
        }
        guard text[36] == UInt8(ascii: "-") else { return nil }
        let numbers = UnsafeRawBufferPointer(rebasing: text[37...])
        guard let dash = numbers.firstIndex(of: UInt8(ascii: "-")),
              isCanonicalUInt16(UnsafeRawBufferPointer(rebasing: numbers[..<dash])),
              isCanonicalUInt16(UnsafeRawBufferPointer(rebasing: numbers[(dash + 1)...])) else { return nil }
        return 37 + dash
    }

    /// Whether `text` is a number from 0 to 65,535 in decimal without leading zeros.
    private static func isCanonicalUInt16(_ text: UnsafeRawBufferPointer) -> Bool {
        guard (1 ... 5).contains(text.count), text.count == 1 || text[0] != UInt8(ascii: "0") else { return false }
        var value = 0
        for byte in text {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return false }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value <= 65_535
    }

    /// `{uuid}-{major}-{minor}`, the UUID with its dashes.
    private static func beaconTriple(_ text: UnsafeRawBufferPointer, into identity: inout CanonicalIdentityBuffer) -> Bool {
        guard text.count > 38, text[36] == UInt8(ascii: "-"), identity.appendUUID(UnsafeRawBufferPointer(rebasing: text[..<36])) else { return false }
        let numbers = UnsafeRawBufferPointer(rebasing: text[37...])
        guard let dash = numbers.firstIndex(of: UInt8(ascii: "-")) else { return false }
        identity.append(":")
        guard identity.appendUInt16(UnsafeRawBufferPointer(rebasing: numbers[..<dash])) else { return false }
        identity.append(":")
        return identity.appendUInt16(UnsafeRawBufferPointer(rebasing: numbers[(dash + 1)...]))
    }

    /// `{namespace}-{instance}`: 20 and 12 hex digits. ESPresense prints the namespace's fifth byte
    /// twice (22 digits: `%02x` of service data bytes 2, 3, 4, 5, 6, 6, 7... 11), which is read
    /// without the repeat.
    private static func eddystone(_ text: UnsafeRawBufferPointer, into identity: inout CanonicalIdentityBuffer) -> Bool {
        guard let dash = text.firstIndex(of: UInt8(ascii: "-")) else { return false }
        let namespace = UnsafeRawBufferPointer(rebasing: text[..<dash])
        let instance = UnsafeRawBufferPointer(rebasing: text[(dash + 1)...])
        if namespace.count == 22 {
            let repeated = (0 ..< 2).allSatisfy { namespace[8 + $0] | 0x20 == namespace[10 + $0] | 0x20 }
            guard repeated, identity.appendHex(UnsafeRawBufferPointer(rebasing: namespace[..<10]), count: 10),
                  identity.appendHex(UnsafeRawBufferPointer(rebasing: namespace[12...]), count: 10) else { return false }
        } else if !identity.appendHex(namespace, count: 20) {
            return false
        }
        identity.append(":")
        return identity.appendHex(instance, count: 12)
    }
}

extension UnsafeRawBufferPointer {
    /// What follows `prefix`, when these bytes begin with it.
    func dropping(prefix: StaticString) -> UnsafeRawBufferPointer? {
        let count = prefix.utf8CodeUnitCount
        guard self.count >= count else { return nil }
        let start = prefix.utf8Start
        for index in 0 ..< count where self[index] != start[index] { return nil }
        return UnsafeRawBufferPointer(rebasing: self[count...])
    }
}
