import CBlueZ
import Testing
@testable import PresenceBLE

/// The parameter bytes of the advertising commands, checked twice: against the layout the Core
/// spec gives, written out by hand, and against BlueZ's own packed structs for the same commands
/// (hci.h), filled field by field, so that a field out of place shows without a radio.
@Suite struct LEAdvertisingCommandTests {
    private static func bytes<T>(of value: T) -> [UInt8] {
        withUnsafeBytes(of: value) { Array($0) }
    }

    @Test func setParametersIsNonConnectablePublicOnAllChannels() {
        // 1 s = 1600 units = 0x0640, little-endian, for min and max.
        let command = LEAdvertisingCommand.setParameters(interval: HCIScanConfiguration.units(1_000))
        #expect(command.ocf == 0x0006)
        #expect(command.parameters == [0x40, 0x06, 0x40, 0x06, 0x03, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0x07, 0x00])
    }

    @Test(arguments: [100.0, 152.5, 1_000, 10_240])
    func setParametersMatchesBlueZsStruct(interval: Double) {
        let units = HCIScanConfiguration.units(interval)
        #expect(Double(units) * 0.625 == interval)
        let reference = le_set_advertising_parameters_cp(
            min_interval: units.littleEndian, max_interval: units.littleEndian, advtype: 0x03, own_bdaddr_type: 0,
            direct_bdaddr_type: 0, direct_bdaddr: bdaddr_t(), chan_map: 0x07, filter: 0)
        let command = LEAdvertisingCommand.setParameters(interval: units)
        #expect(command.ocf == UInt16(OCF_LE_SET_ADVERTISING_PARAMETERS))
        #expect(command.parameters.count == Int(LE_SET_ADVERTISING_PARAMETERS_CP_SIZE))
        #expect(command.parameters == Self.bytes(of: reference))
    }

    @Test(arguments: [0, 1, 30, 31])
    func setDataIsTheLengthThenThirtyOneBytesZeroPadded(count: Int) {
        let data = (0 ..< count).map { UInt8(0xA0 &+ $0) }
        let command = LEAdvertisingCommand.setData(data)
        #expect(command.ocf == UInt16(OCF_LE_SET_ADVERTISING_DATA))
        #expect(command.parameters.count == 32 && command.parameters.count == Int(LE_SET_ADVERTISING_DATA_CP_SIZE))
        #expect(command.parameters == [UInt8(count)] + data + [UInt8](repeating: 0, count: 31 - count))
        var reference = le_set_advertising_data_cp()
        reference.length = UInt8(count)
        withUnsafeMutableBytes(of: &reference.data) { $0.copyBytes(from: data) }
        #expect(command.parameters == Self.bytes(of: reference))
    }

    @Test func setEnableIsOneByteOnOrOff() {
        #expect(LEAdvertisingCommand.setEnable(true).ocf == UInt16(OCF_LE_SET_ADVERTISE_ENABLE))
        #expect(LEAdvertisingCommand.setEnable(true).parameters == [1])
        #expect(LEAdvertisingCommand.setEnable(false).parameters == [0])
        #expect(LE_SET_ADVERTISE_ENABLE_CP_SIZE == 1)
    }
}
