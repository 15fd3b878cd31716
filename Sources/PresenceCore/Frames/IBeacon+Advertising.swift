/// Building an iBeacon to transmit (`presence-scanner --advertise`): the inverse of reading one.
extension IBeacon {
    /// Whether a transmitted frame may state `measuredPower` dBm at 1 m: the contract's `tx` range
    /// (-127...20) without 0, which iBeacon (and this project's decoder) reads as "not calibrated",
    /// so that receivers would publish no `tx` and the link could not be calibrated.
    public static func isTransmittable(measuredPower: Int) -> Bool {
        SightingLimits.txRange.contains(measuredPower) && measuredPower != 0
    }

    /// The beacon named by `identity` (`ibeacon:<uuid>:<major>:<minor>`, as the contract spells it)
    /// stating `measuredPower` dBm at 1 m. Throws for another kind of identity, a region, or a
    /// power outside -127...20 or 0.
    public init(identity: String, measuredPower: Int) throws(ValueError) {
        let parsed = try Identity(parsing: identity)
        guard parsed.kind == .ibeacon else {
            throw ValueError("identity '\(identity)' cannot be advertised as an iBeacon: expected ibeacon:<uuid>:<major>:<minor>")
        }
        guard Self.isTransmittable(measuredPower: measuredPower) else {
            throw ValueError("measured power \(measuredPower) dBm is not valid: expected -127 to 20 dBm, other than 0 (which means not calibrated)")
        }
        // The canonical text is ibeacon:<8-4-4-4-12 lower-case hex>:<0...65535>:<0...65535>.
        let fields = parsed.text.split(separator: ":")
        guard fields.count == 4, let uuid = UInt128(fields[1].filter { $0 != "-" }, radix: 16),
              let major = UInt16(fields[2]), let minor = UInt16(fields[3])
        else {
            throw ValueError("identity '\(identity)' cannot be advertised as an iBeacon: expected ibeacon:<uuid>:<major>:<minor>")
        }
        self.init(uuid: uuid, major: major, minor: minor, measuredPower: Int8(measuredPower))
    }

    /// The legacy advertising data that carries this beacon (30 of the 31 bytes a legacy
    /// advertisement holds): Flags `02 01 06` (LE General Discoverable, BR/EDR not supported),
    /// then manufacturer data `1A FF 4C 00 02 15`, the UUID, major and minor big-endian, and the
    /// measured power as a signed byte.
    public var advertisingData: [UInt8] {
        var bytes: [UInt8] = [0x02, ADStructure.Types.flags, 0x06, 0x1A, ADStructure.Types.manufacturerSpecific, 0x4C, 0x00, 0x02, 0x15]
        bytes.reserveCapacity(30)
        for shift in stride(from: 120, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: uuid >> UInt128(shift)))
        }
        bytes.append(contentsOf: [UInt8(major >> 8), UInt8(truncatingIfNeeded: major), UInt8(minor >> 8), UInt8(truncatingIfNeeded: minor)])
        bytes.append(UInt8(bitPattern: measuredPower))
        return bytes
    }
}
