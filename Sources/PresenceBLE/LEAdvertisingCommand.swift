/// One of the legacy LE advertising commands (OGF 0x08) a scanner node sends to transmit its
/// beacon, as its OCF and parameter bytes (Core spec Vol 4 Part E 7.8.5, 7.8.7, 7.8.9). Pure, so
/// that the layouts are tested without a radio; `HCIDevice` sends them and checks their status.
struct LEAdvertisingCommand: Equatable, Sendable {
    let ocf: UInt16
    let parameters: [UInt8]
    /// What it does, for the error when the controller refuses it.
    let action: String

    /// The advertising type: ADV_NONCONN_IND, neither connectable nor scannable.
    static let nonConnectable: UInt8 = 0x03
    /// Channels 37, 38 and 39.
    static let allChannels: UInt8 = 0x07

    /// LE Set Advertising Parameters (0x0006), 15 bytes: interval min and max (LE16, 0.625 ms
    /// units; both `units`), type 0x03 ADV_NONCONN_IND, own address type 0 (public), peer address
    /// type 0 and peer address 00:00:00:00:00:00 (unused by undirected advertising), channel map
    /// 0x07, filter policy 0 (anyone may scan or connect; moot for this type).
    static func setParameters(interval units: UInt16) -> LEAdvertisingCommand {
        let low = UInt8(truncatingIfNeeded: units), high = UInt8(units >> 8)
        let parameters: [UInt8] = [low, high, low, high, nonConnectable, 0x00, 0x00, 0, 0, 0, 0, 0, 0, allChannels, 0x00]
        return LEAdvertisingCommand(ocf: 0x0006, parameters: parameters, action: "set LE advertising parameters")
    }

    /// LE Set Advertising Data (0x0008), 32 bytes: the data's length, then the data padded with
    /// zeros to 31 bytes. `data` holds at most 31 bytes (`HCIAdvertisingConfiguration.validate`).
    static func setData(_ data: [UInt8]) -> LEAdvertisingCommand {
        precondition(data.count <= 31, "legacy advertising data holds at most 31 bytes")
        let parameters = [UInt8(data.count)] + data + [UInt8](repeating: 0, count: 31 - data.count)
        return LEAdvertisingCommand(ocf: 0x0008, parameters: parameters, action: "set LE advertising data")
    }

    /// LE Set Advertising Enable (0x000A), 1 byte: 1 on, 0 off.
    static func setEnable(_ enable: Bool) -> LEAdvertisingCommand {
        LEAdvertisingCommand(ocf: 0x000A, parameters: [enable ? 1 : 0], action: enable ? "enable LE advertising" : "disable LE advertising")
    }
}
