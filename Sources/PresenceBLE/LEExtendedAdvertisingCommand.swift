/// The Bluetooth 5 extended advertising commands (OGF 0x08) a scanner node falls back to when the
/// controller refuses the legacy ones, as it does once BlueZ has driven it with extended commands
/// (Core spec Vol 4 Part E 7.8.53, 7.8.54, 7.8.56, 7.8.59). The set still sends legacy PDUs
/// (ADV_NONCONN_IND), so every receiver, Bluetooth 4 or 5, hears the same frame. It has a handle of
/// its own, beside any set bluetoothd keeps, and is enabled, disabled and removed by that handle only.
extension LEAdvertisingCommand {
    /// The advertising set's handle (the host picks it, 0x00 to 0xEF): high, away from the low
    /// instance numbers bluetoothd gives its own sets.
    static let extendedHandle: UInt8 = 0xE0
    /// Advertising_Event_Properties: only bit 4, "use legacy advertising PDUs"; not connectable,
    /// scannable or directed, so ADV_NONCONN_IND.
    static let legacyNonConnectable: UInt16 = 0x0010

    /// LE Set Extended Advertising Parameters (0x0036), 25 bytes: handle, event properties (LE16),
    /// primary interval min and max (LE24, 0.625 ms units), channel map 0x07, own address type 0
    /// (public), peer address type and address (unused), filter policy 0, TX power 0x7F (no
    /// preference), primary PHY 1 (LE 1M), secondary max skip 0, secondary PHY 1, SID 0, scan
    /// request notifications off.
    static func setExtendedParameters(interval units: UInt16, handle: UInt8 = extendedHandle) -> LEAdvertisingCommand {
        let low = UInt8(truncatingIfNeeded: units), high = UInt8(units >> 8)
        let properties = legacyNonConnectable
        let parameters: [UInt8] = [
            handle, UInt8(truncatingIfNeeded: properties), UInt8(properties >> 8),
            low, high, 0x00, low, high, 0x00,
            allChannels, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0x00,
            0x7F, 0x01, 0x00, 0x01, 0x00, 0x00,
        ]
        return LEAdvertisingCommand(ocf: 0x0036, parameters: parameters, action: "set extended LE advertising parameters")
    }

    /// LE Set Extended Advertising Data (0x0037): handle, operation 0x03 (complete data), fragment
    /// preference 0x01 (do not fragment), the data's length, the data (at most 31 bytes with
    /// legacy PDUs, `HCIAdvertisingConfiguration.validate`).
    static func setExtendedData(_ data: [UInt8], handle: UInt8 = extendedHandle) -> LEAdvertisingCommand {
        precondition(data.count <= 31, "legacy advertising PDUs hold at most 31 bytes")
        return LEAdvertisingCommand(ocf: 0x0037, parameters: [handle, 0x03, 0x01, UInt8(data.count)] + data,
                                    action: "set extended LE advertising data")
    }

    /// LE Set Extended Advertising Enable (0x0039) for one set: on or off, one set, its handle,
    /// duration 0 (until turned off) and no limit on events. Off names the set, so that other
    /// programs' sets keep advertising (zero sets would turn them all off).
    static func setExtendedEnable(_ enable: Bool, handle: UInt8 = extendedHandle) -> LEAdvertisingCommand {
        LEAdvertisingCommand(ocf: 0x0039, parameters: [enable ? 1 : 0, 1, handle, 0x00, 0x00, 0x00],
                             action: enable ? "enable extended LE advertising" : "disable extended LE advertising")
    }

    /// LE Remove Advertising Set (0x003C): the handle; frees the controller's set at shutdown.
    static func removeSet(handle: UInt8 = extendedHandle) -> LEAdvertisingCommand {
        LEAdvertisingCommand(ocf: 0x003C, parameters: [handle], action: "remove the LE advertising set")
    }
}
