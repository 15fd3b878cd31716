import Testing
@testable import PresenceBLE

/// The extended advertising commands' parameter bytes, against the Core spec's field tables (Vol 4
/// Part E 7.8.53, 7.8.54, 7.8.56, 7.8.59) written out field by field with their sizes (BlueZ's hci.h
/// has no structs for these commands), so that a field out of place or a wrong size shows without a radio.
@Suite struct LEExtendedAdvertisingCommandTests {
    /// A little-endian field of `size` bytes.
    private static func field(_ value: UInt32, size: Int) -> [UInt8] {
        (0 ..< size).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    @Test(arguments: [100.0, 1_000, 10_240])
    func setParametersIsOneLegacyNonConnectableSetOnAllChannels(interval: Double) {
        let units = HCIScanConfiguration.units(interval)
        let command = LEAdvertisingCommand.setExtendedParameters(interval: units, handle: 0xE0)
        let spec: [(name: String, value: UInt32, size: Int)] = [
            ("Advertising_Handle", 0xE0, 1),
            ("Advertising_Event_Properties: legacy PDUs only (bit 4), so ADV_NONCONN_IND", 0x0010, 2),
            ("Primary_Advertising_Interval_Min", UInt32(units), 3),
            ("Primary_Advertising_Interval_Max", UInt32(units), 3),
            ("Primary_Advertising_Channel_Map: 37, 38, 39", 0x07, 1),
            ("Own_Address_Type: public", 0x00, 1),
            ("Peer_Address_Type", 0x00, 1),
            ("Peer_Address", 0, 6),
            ("Advertising_Filter_Policy", 0x00, 1),
            ("Advertising_TX_Power: no preference", 0x7F, 1),
            ("Primary_Advertising_PHY: LE 1M", 0x01, 1),
            ("Secondary_Advertising_Max_Skip", 0x00, 1),
            ("Secondary_Advertising_PHY: LE 1M", 0x01, 1),
            ("Advertising_SID", 0x00, 1),
            ("Scan_Request_Notification_Enable", 0x00, 1),
        ]
        #expect(command.ocf == 0x0036)
        #expect(command.parameters.count == 25)
        #expect(command.parameters == spec.flatMap { Self.field($0.value, size: $0.size) })
    }

    @Test(arguments: [1, 30, 31])
    func setDataIsTheWholeDataUnfragmented(count: Int) {
        let data = (0 ..< count).map { UInt8(0xA0 &+ $0) }
        let command = LEAdvertisingCommand.setExtendedData(data, handle: 0xE0)
        #expect(command.ocf == 0x0037)
        // Handle, Operation 0x03 (complete data), Fragment_Preference 0x01 (none), length, data.
        #expect(command.parameters == [0xE0, 0x03, 0x01, UInt8(count)] + data)
    }

    @Test func enableAndDisableNameOnlyOurSet() {
        // Enable, Num_Sets 1, then per set: handle, Duration (2 bytes, 0 = until disabled),
        // Max_Extended_Advertising_Events (0 = no limit). Disabling with Num_Sets 0 would turn off
        // every set, bluetoothd's too.
        #expect(LEAdvertisingCommand.setExtendedEnable(true, handle: 0xE0).ocf == 0x0039)
        #expect(LEAdvertisingCommand.setExtendedEnable(true, handle: 0xE0).parameters == [1, 1, 0xE0, 0, 0, 0])
        #expect(LEAdvertisingCommand.setExtendedEnable(false, handle: 0xE0).parameters == [0, 1, 0xE0, 0, 0, 0])
    }

    @Test func removeSetTakesTheHandle() {
        #expect(LEAdvertisingCommand.removeSet(handle: 0xE0).ocf == 0x003C)
        #expect(LEAdvertisingCommand.removeSet(handle: 0xE0).parameters == [0xE0])
    }

    @Test func ourHandleIsOneTheSpecAllows() {
        // Advertising_Handle: 0x00 to 0xEF; the default is the one every command above uses.
        #expect(LEAdvertisingCommand.extendedHandle <= 0xEF)
        #expect(LEAdvertisingCommand.setExtendedEnable(true).parameters[2] == LEAdvertisingCommand.extendedHandle)
        #expect(LEAdvertisingCommand.setExtendedParameters(interval: 1600).parameters[0] == LEAdvertisingCommand.extendedHandle)
        #expect(LEAdvertisingCommand.setExtendedData([1]).parameters[0] == LEAdvertisingCommand.extendedHandle)
        #expect(LEAdvertisingCommand.removeSet().parameters == [LEAdvertisingCommand.extendedHandle])
    }
}
