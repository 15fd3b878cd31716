import CBlueZ
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// An open HCI socket on one adapter: the raw device channel (for scan commands and reports) or
/// the monitor channel (every controller's traffic, read-only). It is confined to the scanner's
/// reader thread, except `close`, which the owner calls after that thread has ended.
final class HCIDevice: @unchecked Sendable {  // one thread at a time uses the descriptor; see above
    let descriptor: Int32
    let adapterIndex: Int32
    let channel: HCIScanConfiguration.Mode
    private var closed = false

    private init(descriptor: Int32, adapterIndex: Int32, channel: HCIScanConfiguration.Mode) {
        self.descriptor = descriptor
        self.adapterIndex = adapterIndex
        self.channel = channel
    }

    /// Opens `adapter` (`hci0`) on the raw channel, with a filter for LE meta events.
    static func openRaw(_ adapter: String) throws(BLEError) -> HCIDevice {
        let index = try adapterIndex(adapter)
        let descriptor = hci_open_dev(index)
        guard descriptor >= 0 else { throw BLEError.failed("cannot open adapter \(adapter)", adapter: adapter) }
        let device = HCIDevice(descriptor: descriptor, adapterIndex: index, channel: .scan)
        var filter = hci_filter()
        hci_filter_clear(&filter)
        hci_filter_set_ptype(Int32(HCI_EVENT_PKT), &filter)
        hci_filter_set_event(Int32(EVT_LE_META_EVENT), &filter)
        guard setsockopt(descriptor, Int32(SOL_HCI), Int32(HCI_FILTER), &filter, socklen_t(MemoryLayout<hci_filter>.size)) == 0 else {
            let error = BLEError.failed("cannot set the HCI event filter on \(adapter)", adapter: adapter)
            device.close()
            throw error
        }
        return device
    }

    /// Opens the monitor channel, keeping the events of `adapter` only.
    static func openMonitor(_ adapter: String) throws(BLEError) -> HCIDevice {
        let index = try adapterIndex(adapter)
        let descriptor = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard descriptor >= 0 else { throw BLEError.failed("cannot open the HCI monitor channel", adapter: adapter) }
        var address = sockaddr_hci(hci_family: sa_family_t(AF_BLUETOOTH), hci_dev: UInt16(HCI_DEV_NONE), hci_channel: UInt16(HCI_CHANNEL_MONITOR))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_hci>.size)) }
        }
        guard bound == 0 else {
            let error = BLEError.failed("cannot bind the HCI monitor channel", adapter: adapter)
            Glibc.close(descriptor)
            throw error
        }
        return HCIDevice(descriptor: descriptor, adapterIndex: index, channel: .monitor)
    }

    private static func adapterIndex(_ adapter: String) throws(BLEError) -> Int32 {
        // hci_devid needs a socket: without AF_BLUETOOTH it fails, and errno says why.
        let probe = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard probe >= 0 else { throw BLEError.failed("cannot open a Bluetooth socket", adapter: adapter) }
        Glibc.close(probe)
        let index = hci_devid(adapter)
        guard index >= 0 else { throw BLEError.failed("cannot find adapter \(adapter)", adapter: adapter, errno: ENODEV) }
        return index
    }

    /// Waits up to `timeout` ms for a packet; returns the HCI event bytes (after the H4 type),
    /// nil on timeout or for anything but an event of our adapter.
    func readEvent(timeout: Int32) throws(BLEError) -> [UInt8]? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, timeout)
        if ready < 0 {
            if errno == EINTR { return nil }
            throw BLEError.failed("cannot wait for HCI events", adapter: "hci\(adapterIndex)")
        }
        guard ready > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 1 << 12)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else {
            if count < 0, errno == EAGAIN || errno == EINTR { return nil }
            throw BLEError.failed("cannot read HCI events", adapter: "hci\(adapterIndex)", errno: count == 0 ? ENETDOWN : errno)
        }
        switch channel {
        case .scan:
            // [0x04 H4 type][event code][length][parameters]
            guard count >= 3, buffer[0] == UInt8(HCI_EVENT_PKT) else { return nil }
            return Array(buffer[1 ..< count])
        case .monitor:
            // [opcode LE16][index LE16][length LE16][packet]; opcode 3 is an event.
            guard count >= 6 else { return nil }
            let opcode = UInt16(buffer[0]) | UInt16(buffer[1]) << 8
            let index = UInt16(buffer[2]) | UInt16(buffer[3]) << 8
            guard opcode == 3, Int32(index) == adapterIndex else { return nil }
            return Array(buffer[6 ..< count])
        }
    }

    func close() {
        guard !closed else { return }
        closed = true
        if channel == .scan { hci_close_dev(descriptor) } else { Glibc.close(descriptor) }
    }

    deinit {
        assert(closed, "HCIDevice not closed")
    }
}
