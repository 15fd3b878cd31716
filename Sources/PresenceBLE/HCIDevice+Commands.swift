import CBlueZ

#if canImport(Glibc)
import Glibc
#endif

/// LE scan commands. libbluetooth's helpers send the legacy ones; the extended ones (Bluetooth
/// 5: LE Set Extended Scan Parameters 0x2041, Enable 0x2042) go through `hci_send_req`, as the
/// advertising commands do.
extension HCIDevice {
    /// Which commands a controller accepted.
    enum ScanCommands: Sendable {
        case legacy, extended
    }

    /// Starts scanning with duplicate filtering off, so RSSI keeps flowing: legacy commands, or
    /// the extended ones when the controller refuses the legacy ones (status 0x0C).
    func startScan(_ configuration: HCIScanConfiguration) throws(BLEError) -> ScanCommands {
        let interval = HCIScanConfiguration.units(configuration.interval)
        let window = HCIScanConfiguration.units(configuration.window)
        let type: UInt8 = configuration.active ? 1 : 0
        _ = hci_le_set_scan_enable(descriptor, 0, 0, 1000)
        let legacy = hci_le_set_scan_parameters(descriptor, type, interval.littleEndian, window.littleEndian, 0, 0, 1000)
        if legacy >= 0 {
            guard hci_le_set_scan_enable(descriptor, 1, 0, 1000) >= 0 else {
                throw BLEError.failed("cannot enable LE scanning on \(configuration.adapter)", adapter: configuration.adapter)
            }
            return .legacy
        }
        guard errno == EIO else {
            throw BLEError.failed("cannot set LE scan parameters on \(configuration.adapter)", adapter: configuration.adapter)
        }
        // Command disallowed: the controller is driven with extended commands.
        _ = try sendLE(ocf: 0x0042, [0, 0, 0, 0, 0, 0], adapter: configuration.adapter)
        let parameters: [UInt8] = [0, 0, 0x01, type, UInt8(interval & 0xFF), UInt8(interval >> 8), UInt8(window & 0xFF), UInt8(window >> 8)]
        let disallowed = "another program is scanning; try --monitor"
        try requireSuccess(sendLE(ocf: 0x0041, parameters, adapter: configuration.adapter), "set extended LE scan parameters", configuration.adapter,
                           disallowed: disallowed)
        try requireSuccess(sendLE(ocf: 0x0042, [1, 0, 0, 0, 0, 0], adapter: configuration.adapter), "enable extended LE scanning", configuration.adapter,
                           disallowed: disallowed)
        return .extended
    }

    /// Stops the scan started with `commands` (leaving scanning as it was before we started).
    func stopScan(_ commands: ScanCommands) {
        switch commands {
        case .legacy: _ = hci_le_set_scan_enable(descriptor, 0, 0, 1000)
        case .extended: _ = try? sendLE(ocf: 0x0042, [0, 0, 0, 0, 0, 0], adapter: "hci\(adapterIndex)")
        }
    }

    /// Sends an LE controller command and returns its status byte.
    func sendLE(ocf: UInt16, _ parameters: [UInt8], adapter: String) throws(BLEError) -> UInt8 {
        var status: UInt8 = 0xFF
        var command = parameters
        let rc = command.withUnsafeMutableBytes { commandBytes in
            withUnsafeMutablePointer(to: &status) { statusPointer in
                var request = hci_request(ogf: UInt16(OGF_LE_CTL), ocf: ocf, event: 0, cparam: commandBytes.baseAddress,
                                          clen: Int32(commandBytes.count), rparam: UnsafeMutableRawPointer(statusPointer), rlen: 1)
                return hci_send_req(descriptor, &request, 1000)
            }
        }
        guard rc >= 0 else {
            let low = ocf & 0xFF
            throw BLEError.failed("HCI command 0x20\(low < 0x10 ? "0" : "")\(String(low, radix: 16)) failed", adapter: adapter)
        }
        return status
    }

    /// Throws unless `status` is success, naming what failed; `disallowed` says why the controller
    /// may have answered 0x0C, command disallowed.
    func requireSuccess(_ status: UInt8, _ what: String, _ adapter: String, disallowed: String) throws(BLEError) {
        guard status == 0 else {
            let hex = (status < 0x10 ? "0" : "") + String(status, radix: 16)
            throw BLEError("cannot \(what) on \(adapter): controller status 0x\(hex)\(status == 0x0C ? " (command disallowed: \(disallowed))" : "")")
        }
    }
}
