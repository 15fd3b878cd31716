/// One advertisement as OpenMQTTGateway and Theengs Gateway publish it
/// (`{prefix}/{gateway}/BTtoMQTT/{address}`): a JSON object with the advertiser's address `id`,
/// `rssi`, and what the gateway read of the frame: Theengs Decoder's iBeacon fields (`uuid`,
/// `major`, `minor`, `txpower`), or the raw `manufacturerdata`, `servicedata` and
/// `servicedatauuid` in hex, or a TX power level (`txpower`, at 0 m).
///
/// The identity is the beacon's when the frame names one: an iBeacon (decoded, or in the
/// manufacturer data), an AltBeacon or an Eddystone UID (in the raw data); otherwise the address
/// (`mac:aa:bb:cc:dd:ee:ff`). Messages without `rssi` (a gateway's tracker saying a device is
/// `offline` or `absent`, a sensor's readings) are not sightings.
public enum GatewayAdvertisement {
    /// Reads `payload`, spelling the advertiser's canonical identity into `identity`.
    public static func read(_ payload: UnsafeRawBufferPointer, identity: inout CanonicalIdentityBuffer) -> Result<ForeignSighting, ForeignRejection> {
        guard payload.count <= ForeignSighting.maximumBytes else { return .failure(.tooLarge(bytes: payload.count)) }
        var fields = Fields()
        var reader = JSONReader(payload, maximumDepth: 8)
        do throws(JSONReader.Failure) {
            try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
                try fields.read(key, from: &reader)
            }
            try reader.expectEnd()
        } catch {
            return .failure(.notJSON(error))
        }
        guard fields.rssiSeen else { return .failure(.noRSSI) }
        guard let rssi = fields.rssi else { return .failure(.badRSSI) }
        var tx: Int?
        identity.reset()
        if decodedIBeacon(fields, in: payload, into: &identity) { return .success(ForeignSighting(rssi: rssi, tx: fields.txPower)) }
        identity.reset()
        if let data = fields.manufacturerData, data.withBytes(in: payload, { beaconInManufacturerData($0, into: &identity, tx: &tx) }) {
            return .success(ForeignSighting(rssi: rssi, tx: tx))
        }
        identity.reset()
        if let uuid = fields.serviceDataUUID, let data = fields.serviceData, uuid.withBytes(in: payload, { isEddystoneService($0) }),
           data.withBytes(in: payload, { eddystoneUID($0, into: &identity, tx: &tx) }) {
            return .success(ForeignSighting(rssi: rssi, tx: tx))
        }
        identity.reset()
        identity.append("mac:")
        guard let address = fields.address else { return .failure(.noIdentity) }
        guard address.withBytes(in: payload, { identity.appendAddress($0) }) else { return .failure(.badIdentity) }
        return .success(ForeignSighting(rssi: rssi, tx: fields.txPower.map { $0 - BeaconFrame.eddystoneLossAt1m }))
    }

    /// The members this reader uses.
    private struct Fields {
        var address: TextSpan?
        var rssi: Int?
        var rssiSeen = false
        var txPower: Int?
        var uuid: TextSpan?
        var major: Number?
        var minor: Number?
        var manufacturerData: TextSpan?
        var serviceData: TextSpan?
        var serviceDataUUID: TextSpan?

        /// A major or minor, written as a number or as a string of digits.
        enum Number {
            case value(Int64)
            case text(TextSpan)
        }

        mutating func read(_ key: JSONKey, from reader: inout JSONReader) throws(JSONReader.Failure) {
            // By length first: a gateway writes many members, most of them none of these.
            switch key.count {
            case 2 where key.is("id"): address = try Self.string(&reader)
            case 4 where key.is("rssi"):
                rssiSeen = true
                rssi = try reader.readDecibels(within: ForeignSighting.rssiRange)
            case 4 where key.is("uuid"): uuid = try Self.string(&reader)
            case 5 where key.is("major"): major = try Self.number(&reader)
            case 5 where key.is("minor"): minor = try Self.number(&reader)
            case 7 where key.is("txpower"): txPower = try reader.readDecibels(within: -128 ... 127)
            case 11 where key.is("servicedata"): serviceData = try Self.string(&reader)
            case 15 where key.is("servicedatauuid"): serviceDataUUID = try Self.string(&reader)
            case 16 where key.is("manufacturerdata"): manufacturerData = try Self.string(&reader)
            default: try reader.skipValueAllowingNonFinite()
            }
        }

        /// A string member, or nil (skipped) for another kind of value.
        private static func string(_ reader: inout JSONReader) throws(JSONReader.Failure) -> TextSpan? {
            guard try reader.peekKind() == .string else {
                try reader.skipValueAllowingNonFinite()
                return nil
            }
            return try reader.readStringSpan()
        }

        private static func number(_ reader: inout JSONReader) throws(JSONReader.Failure) -> Number? {
            switch try reader.peekKind() {
            case .number: return try reader.readInteger().map(Number.value)
            case .string: return .text(try reader.readStringSpan())
            default:
                try reader.skipValueAllowingNonFinite()
                return nil
            }
        }
    }

    /// Whether Theengs Decoder's iBeacon fields are there (`uuid`, `major`, `minor`; `txpower` is
    /// then its power at 1 m), spelled into `identity`.
    private static func decodedIBeacon(_ fields: Fields, in payload: UnsafeRawBufferPointer, into identity: inout CanonicalIdentityBuffer) -> Bool {
        guard let uuid = fields.uuid, let major = fields.major, let minor = fields.minor else { return false }
        identity.append("ibeacon:")
        guard uuid.withBytes(in: payload, { identity.appendUUID($0) }) else { return false }
        identity.append(":")
        guard appendNumber(major, in: payload, into: &identity) else { return false }
        identity.append(":")
        return appendNumber(minor, in: payload, into: &identity)
    }

    /// A major or minor from 0 to 65,535.
    private static func appendNumber(_ number: Fields.Number, in payload: UnsafeRawBufferPointer, into identity: inout CanonicalIdentityBuffer) -> Bool {
        switch number {
        case .value(let value):
            guard (0 ... 65_535).contains(value) else { return false }
            identity.appendDecimal(UInt16(value))
            return true
        case .text(let text):
            return text.withBytes(in: payload) { identity.appendUInt16($0) }
        }
    }

    /// An iBeacon (company 0x004C, type 0x02 0x15) or an AltBeacon (code 0xBEAC) in the manufacturer
    /// data as hex, company id first in its little-endian bytes; `tx` is then the frame's power at 1 m.
    private static func beaconInManufacturerData(_ hex: UnsafeRawBufferPointer, into identity: inout CanonicalIdentityBuffer, tx: inout Int?) -> Bool {
        var bytes = HexBytes()
        guard bytes.read(hex) else { return false }
        if bytes.count == 25, bytes[0] == 0x4C, bytes[1] == 0x00, bytes[2] == 0x02, bytes[3] == 0x15 {
            identity.append("ibeacon:")
            appendBeaconFields(bytes, from: 4, into: &identity)
            tx = Int(Int8(bitPattern: bytes[24]))
            return true
        }
        if bytes.count == 26, bytes[2] == 0xBE, bytes[3] == 0xAC {
            identity.append("altbeacon:")
            appendBeaconFields(bytes, from: 4, into: &identity)
            tx = Int(Int8(bitPattern: bytes[24]))
            return true
        }
        return false
    }

    /// A UUID at `start` and two big-endian 16-bit numbers after it, as `uuid:n:n`.
    private static func appendBeaconFields(_ bytes: HexBytes, from start: Int, into identity: inout CanonicalIdentityBuffer) {
        for offset in 0 ..< 16 {
            if offset == 4 || offset == 6 || offset == 8 || offset == 10 { identity.append("-") }
            identity.appendHex(values: CollectionOfOne(bytes[start + offset]))
        }
        for offset in stride(from: 16, through: 18, by: 2) {
            identity.append(":")
            identity.appendDecimal(UInt16(bytes[start + offset]) << 8 | UInt16(bytes[start + offset + 1]))
        }
    }

    /// Whether a service data UUID, as gateways write it (`0xfeaa`, `feaa`, either case), is Eddystone's.
    private static func isEddystoneService(_ text: UnsafeRawBufferPointer) -> Bool {
        let digits = text.dropping(prefix: "0x") ?? text
        guard digits.count == 4 else { return false }
        return zip(digits, "feaa".utf8).allSatisfy { $0 | 0x20 == $1 }
    }

    /// An Eddystone UID frame (type 0x00, power at 0 m, namespace, instance) in service data as hex.
    /// `tx` is then its power at 1 m.
    private static func eddystoneUID(_ hex: UnsafeRawBufferPointer, into identity: inout CanonicalIdentityBuffer, tx: inout Int?) -> Bool {
        var bytes = HexBytes()
        guard bytes.read(hex), bytes.count == 18 || bytes.count == 20, bytes[0] == 0x00 else { return false }
        identity.append("eddystone:")
        identity.appendHex(values: (2 ..< 12).lazy.map { bytes[$0] })
        identity.append(":")
        identity.appendHex(values: (12 ..< 18).lazy.map { bytes[$0] })
        tx = Int(Int8(bitPattern: bytes[1])) - BeaconFrame.eddystoneLossAt1m
        return true
    }
}

/// Up to 32 bytes read from hex, without allocating: the beacon frames gateways pass on raw.
private struct HexBytes {
    private var storage = InlineArray<32, UInt8>(repeating: 0)
    private(set) var count = 0

    /// Reads an even number of hex digits, up to 64; false for anything else.
    mutating func read(_ hex: UnsafeRawBufferPointer) -> Bool {
        guard hex.count % 2 == 0, hex.count <= 64 else { return false }
        count = 0
        var index = 0
        while index < hex.count {
            guard let high = CanonicalIdentityBuffer.nibble(hex[index]), let low = CanonicalIdentityBuffer.nibble(hex[index + 1]) else { return false }
            storage[count] = high << 4 | low
            count += 1
            index += 2
        }
        return true
    }

    subscript(index: Int) -> UInt8 {
        storage[index]
    }
}
