#if canImport(Glibc)
import Glibc
#endif

/// Why Bluetooth scanning could not start or go on, in one line a person can act on.
public struct BLEError: Error, Sendable, CustomStringConvertible {
    public let message: String
    /// The `errno` behind it, when there is one.
    public let code: Int32?

    public init(_ message: String, code: Int32? = nil) {
        self.message = message
        self.code = code
    }

    public var description: String { message }

    /// The one funnel from a failed system or libbluetooth call to an error: names what failed,
    /// the system's own words, and what to do about the common causes.
    static func failed(_ what: String, adapter: String, errno code: Int32 = errno) -> BLEError {
        let reason = String(cString: strerror(code))
        switch code {
        case EAFNOSUPPORT:
            return BLEError("\(what): \(reason): this kernel has no Bluetooth support (load the bluetooth module, or run on a host with an adapter)", code: code)
        case ENODEV:
            return BLEError("\(what): \(reason): no Bluetooth adapter '\(adapter)' (`hciconfig -a` or `btmgmt info` lists them)", code: code)
        case EPERM, EACCES:
            return BLEError("""
                \(what): \(reason): scanning needs CAP_NET_RAW and CAP_NET_ADMIN; grant them with \
                `sudo setcap cap_net_raw,cap_net_admin+eip $(command -v presence-scanner)` or run the systemd unit in deploy/
                """, code: code)
        case ENETDOWN:
            return BLEError("\(what): \(reason): adapter '\(adapter)' is down (`sudo btmgmt --index \(adapter) power on`)", code: code)
        default:
            return BLEError("\(what): \(reason)", code: code)
        }
    }
}
