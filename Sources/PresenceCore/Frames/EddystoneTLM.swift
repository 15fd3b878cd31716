/// An unencrypted Eddystone-TLM frame (0x20, version 0x00): battery, temperature, advertising count
/// and time since power-up. It carries no identity: it is interleaved with an identifying frame.
public struct EddystoneTLM: Hashable, Sendable {
    /// Battery voltage, mV; 0 when the beacon does not report it.
    public var batteryMillivolts: UInt16
    /// Temperature as sent: signed 8.8 fixed point, °C; 0x8000 (−128 °C) when not reported.
    public var temperatureRaw: Int16
    /// Advertising PDUs sent since power-up or reboot.
    public var advertisingCount: UInt32
    /// Time since power-up or reboot, in 0.1 s units (`SEC_CNT`).
    public var uptimeDeciseconds: UInt32

    public init(batteryMillivolts: UInt16, temperatureRaw: Int16, advertisingCount: UInt32, uptimeDeciseconds: UInt32) {
        self.batteryMillivolts = batteryMillivolts
        self.temperatureRaw = temperatureRaw
        self.advertisingCount = advertisingCount
        self.uptimeDeciseconds = uptimeDeciseconds
    }

    /// Temperature in °C, or nil when the beacon does not report it.
    public var temperature: Double? {
        temperatureRaw == Int16.min ? nil : Double(temperatureRaw) / 256
    }

    /// Seconds since power-up or reboot.
    public var uptime: Double { Double(uptimeDeciseconds) / 10 }

    /// The figures as the wire's `Telemetry`.
    public var telemetry: Telemetry {
        Telemetry(
            batteryMillivolts: batteryMillivolts == 0 ? nil : Int(batteryMillivolts),
            temperature: temperature,
            advertisementCount: advertisingCount,
            uptime: uptime)
    }

    init?(frame span: Span<UInt8>) {
        guard span.count >= 14, span[0] == 0x20, span[1] == 0x00 else { return nil }
        batteryMillivolts = span.uint16BigEndian(at: 2)
        temperatureRaw = Int16(bitPattern: span.uint16BigEndian(at: 4))
        advertisingCount = span.uint32BigEndian(at: 6)
        uptimeDeciseconds = span.uint32BigEndian(at: 10)
    }
}

/// An encrypted Eddystone-TLM frame (0x20, version 0x01), sent by EID beacons: 12 bytes of
/// encrypted telemetry, a salt and a MIC. Recognised, not readable without the beacon's key.
public struct EddystoneEncryptedTLM: Hashable, Sendable {
    /// The encrypted telemetry (12 bytes in a whole frame; fewer if the frame stops short).
    public var encryptedData: ShortBytes
    /// The salt, big-endian; nil when the frame stops before it.
    public var salt: UInt16?
    /// The message integrity check, big-endian; nil when the frame stops before it.
    public var mic: UInt16?

    public init(encryptedData: ShortBytes, salt: UInt16?, mic: UInt16?) {
        self.encryptedData = encryptedData
        self.salt = salt
        self.mic = mic
    }

    /// What the wire can say of it: that there was telemetry, encrypted.
    public var telemetry: Telemetry { Telemetry(encrypted: true) }

    init?(frame span: Span<UInt8>) {
        guard span.count >= 2, span[0] == 0x20, span[1] == 0x01 else { return nil }
        encryptedData = ShortBytes(span, 2 ..< min(span.count, 14))
        salt = span.count >= 16 ? span.uint16BigEndian(at: 14) : nil
        mic = span.count >= 18 ? span.uint16BigEndian(at: 16) : nil
    }
}
