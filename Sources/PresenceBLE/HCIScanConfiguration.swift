/// How to scan on one adapter.
public struct HCIScanConfiguration: Sendable, Equatable {
    /// How advertising reports are obtained.
    public enum Mode: String, Sendable, CaseIterable {
        /// Send LE scan commands: legacy ones, or the extended ones when the controller refuses
        /// the legacy ones (status 0x0C, as when BlueZ already drives it with extended scanning).
        case scan
        /// Send no command: read the reports of a scan someone else runs (bluetoothd) through the
        /// HCI monitor channel, as btmon does.
        case monitor
    }

    /// The adapter's name, such as `hci0`.
    public var adapter: String
    public var mode: Mode = .scan
    /// Active scanning asks for scan responses; passive (the default) only listens.
    public var active = false
    /// Scan interval and window, ms (0.625 ms steps, 2.5 ms to 10.24 s; window ≤ interval).
    public var interval = 100.0
    public var window = 100.0
    /// What to transmit through the same adapter while scanning; nil (the default) transmits
    /// nothing. Needs the `scan` mode: the monitor channel sends no command.
    public var advertising: HCIAdvertisingConfiguration?

    public init(adapter: String) {
        self.adapter = adapter
    }

    /// Checks the figures; the message names the bad value.
    public func validate() throws(BLEError) {
        guard adapter.hasPrefix("hci"), Int(adapter.dropFirst(3)) != nil else {
            throw BLEError("adapter '\(adapter)' is not valid: expected hci0, hci1, ...")
        }
        guard (2.5 ... 10_240).contains(interval) else {
            throw BLEError("scan interval \(interval) ms is not valid: expected 2.5 to 10240 ms")
        }
        guard (2.5 ... 10_240).contains(window), window <= interval else {
            throw BLEError("scan window \(window) ms is not valid: expected 2.5 ms up to the interval (\(interval) ms)")
        }
        if let advertising {
            guard mode == .scan else {
                throw BLEError("advertising needs the raw HCI channel: the monitor mode sends no command to adapter \(adapter)")
            }
            try advertising.validate()
        }
    }

    /// A duration in the controller's 0.625 ms units.
    static func units(_ milliseconds: Double) -> UInt16 {
        UInt16(min(0x4000, max(0x0004, (milliseconds / 0.625).rounded())))
    }
}
