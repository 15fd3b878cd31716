/// What a scanning node transmits through the adapter it scans with (`presence-scanner
/// --advertise`): legacy non-connectable advertising (ADV_NONCONN_IND) of `data` from the
/// adapter's public address, on all three advertising channels.
public struct HCIAdvertisingConfiguration: Sendable, Equatable {
    /// Advertising intervals accepted, ms: Bluetooth 4.x controllers refuse non-connectable
    /// advertising faster than every 100 ms; 10.24 s is the legacy maximum.
    public static let intervalRange = 100.0 ... 10_240.0

    /// The advertising data (AD structures, at most 31 bytes), such as an iBeacon's.
    public var data: [UInt8]
    /// How often it is sent, ms (0.625 ms steps); the controller adds 0 to 10 ms at random.
    public var interval: Double

    public init(data: [UInt8], interval: Double = 1_000) {
        self.data = data
        self.interval = interval
    }

    /// Checks the figures; the message names the bad value.
    public func validate() throws(BLEError) {
        guard (1 ... 31).contains(data.count) else {
            throw BLEError("advertising data of \(data.count) bytes is not valid: expected 1 to 31 bytes (legacy advertising)")
        }
        guard Self.intervalRange.contains(interval) else {
            throw BLEError("advertising interval \(interval) ms is not valid: expected 100 to 10240 ms")
        }
    }
}
