/// What a scanner node heard in one batch, as published on `{p}/v1/sightings/{node}`.
public struct SightingBatch: Equatable, Sendable {
    /// The publishing node's key; equals the topic's node segment.
    public var node: String
    /// Counts batches from the node's start.
    public var seq: Int64
    /// When the node sent the batch, in ms since the Unix epoch (node clock).
    public var sent: Int64
    public var sightings: [Sighting]

    public init(node: String, seq: Int64, sent: Int64, sightings: [Sighting]) {
        self.node = node
        self.seq = seq
        self.sent = sent
        self.sightings = sightings
    }
}

/// One advertisement heard by a node.
public struct Sighting: Equatable, Sendable {
    /// When it was heard, in ms since the Unix epoch (node clock).
    public var ts: Int64
    /// The advertiser's canonical identity.
    public var id: String
    /// Received signal strength, dBm, in [-127, 20].
    public var rssi: Int
    /// The frame's calibrated power at 1 m, dBm, when the frame states one.
    public var tx: Int?
    /// The advertiser's address, when known.
    public var addr: String?
    /// Beacon telemetry (Eddystone TLM) heard from the same advertiser, when any.
    public var telemetry: Telemetry?

    public init(ts: Int64, id: String, rssi: Int, tx: Int? = nil, addr: String? = nil, telemetry: Telemetry? = nil) {
        self.ts = ts
        self.id = id
        self.rssi = rssi
        self.tx = tx
        self.addr = addr
        self.telemetry = telemetry
    }
}

/// Battery and health figures a beacon broadcasts (Eddystone TLM).
public struct Telemetry: Equatable, Sendable {
    /// Battery voltage, mV; nil when the beacon does not report it.
    public var batteryMillivolts: Int?
    /// Beacon temperature, °C; nil when not reported.
    public var temperature: Double?
    /// Advertising PDUs sent since power-up.
    public var advertisementCount: UInt32?
    /// Time since power-up, seconds (0.1 s resolution).
    public var uptime: Double?
    /// Whether the telemetry was encrypted (eTLM) and so not readable here.
    public var encrypted: Bool

    public init(batteryMillivolts: Int? = nil, temperature: Double? = nil, advertisementCount: UInt32? = nil, uptime: Double? = nil, encrypted: Bool = false) {
        self.batteryMillivolts = batteryMillivolts
        self.temperature = temperature
        self.advertisementCount = advertisementCount
        self.uptime = uptime
        self.encrypted = encrypted
    }
}

/// The bounds the contract sets on a batch and its sightings.
public enum SightingLimits {
    public static let maximumSightings = 10_000
    public static let maximumBytes = 1 << 20
    public static let rssiRange = -127 ... 20
    public static let txRange = -127 ... 20
    /// Timestamps outside 2000-01-01 ... 2100-01-01 are not plausible clock readings.
    public static let timestampRange: ClosedRange<Int64> = 946_684_800_000 ... 4_102_444_800_000
    public static let maximumIdentityLength = 128
}
