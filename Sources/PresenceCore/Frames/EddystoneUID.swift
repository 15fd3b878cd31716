/// An Eddystone-UID frame (0x00): a 10-byte namespace and a 6-byte instance, with the calibrated
/// power at 0 m.
public struct EddystoneUID: Hashable, Sendable {
    /// Received power at 0 m, dBm, as the frame states it. Eddystone measures at 0 m, not 1 m.
    public var txPowerAt0m: Int8
    /// The namespace, in the low 80 bits.
    public var namespace: UInt128
    /// The instance, in the low 48 bits.
    public var instance: UInt64

    public init(txPowerAt0m: Int8, namespace: UInt128, instance: UInt64) {
        self.txPowerAt0m = txPowerAt0m
        self.namespace = namespace & (UInt128(1) << 80 - 1)
        self.instance = instance & 0xFFFF_FFFF_FFFF
    }

    /// The namespace as 20 lower-case hex digits.
    public var namespaceText: String {
        var text = ASCIIText()
        text.appendHex(namespace, digits: 20)
        return text.string
    }

    /// The instance as 12 lower-case hex digits.
    public var instanceText: String {
        var text = ASCIIText()
        text.appendHex(UInt128(instance), digits: 12)
        return text.string
    }

    /// Reads a UID frame (type byte first); the two RFU bytes may be absent.
    init?(frame span: Span<UInt8>) {
        guard span.count >= 18, span[0] == 0x00 else { return nil }
        txPowerAt0m = Int8(bitPattern: span[1])
        namespace = span.uint128BigEndian(at: 2, count: 10)
        instance = span.uint64BigEndian(at: 12, count: 6)
    }
}

/// An Eddystone-EID frame (0x30): an 8-byte ephemeral identifier that rotates, readable only by its
/// owner's resolver. Recognised, but it names no stable beacon.
public struct EddystoneEID: Hashable, Sendable {
    /// Received power at 0 m, dBm.
    public var txPowerAt0m: Int8
    public var ephemeralID: UInt64

    public init(txPowerAt0m: Int8, ephemeralID: UInt64) {
        self.txPowerAt0m = txPowerAt0m
        self.ephemeralID = ephemeralID
    }

    init?(frame span: Span<UInt8>) {
        guard span.count >= 10, span[0] == 0x30 else { return nil }
        txPowerAt0m = Int8(bitPattern: span[1])
        ephemeralID = span.uint64BigEndian(at: 2)
    }
}
