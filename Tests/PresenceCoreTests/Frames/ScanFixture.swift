@testable import PresenceCore

/// Builds `Tests/Fixtures/scan.btsnoop`: one second of a BlueZ monitor capture (datalink 2001, as
/// `btmon -w` writes it) of a passive LE scan on hci0. Deterministic: the same bytes every time.
///
/// To write the file again after changing this generator:
///
///     PRESENCE_WRITE_FIXTURES=1 swift test --filter ScanFixtureTests
///
/// then update `scan.expected.json` by hand (it is written from the frames' meaning, not from the
/// decoder's output) and check `btmon -r Tests/Fixtures/scan.btsnoop` still reads it.
///
/// What it holds, at `start` + n ms: index records and a system note; scan setup commands with
/// Command Complete and Command Status events; 0 an iBeacon (public address); 100 one event with two
/// reports, an AltBeacon (random static) and an advert from a resolvable private address; 200 an
/// Eddystone-UID, 300 its TLM, 400 the UID again (random static); 500 an Eddystone-URL (public);
/// 600 and 601 an extended advertisement in two fragments (an iBeacon after a long name);
/// 700 a malformed iBeacon (its AD length runs past the data, public address); 800 an LE Meta event
/// cut short; 900 an iBeacon sent from a resolvable private address; 1000 the scan disabled.
enum ScanFixture {
    /// 2025-11-22 01:25:34 UTC, in µs since the Unix epoch.
    static let start: Int64 = 1_763_774_734_000_000

    static func capture() -> [UInt8] {
        var writer = BTSnoopWriter(datalink: .monitor)
        let controller = BluetoothAddress(rawValue: 0x001A_7DDA_7113)
        writer.appendMonitor(opcode: BTSnoop.MonitorOpcode.newIndex, controllerIndex: 0,
                             data: [0x00, 0x01] + controller.hciBytes + Array("hci0\0\0\0\0".utf8), unixMicroseconds: start - 3000)
        writer.appendMonitor(opcode: BTSnoop.MonitorOpcode.openIndex, controllerIndex: 0, data: [], unixMicroseconds: start - 2999)
        writer.appendMonitor(opcode: BTSnoop.MonitorOpcode.indexInfo, controllerIndex: 0,
                             data: controller.hciBytes + [0x0A, 0x00], unixMicroseconds: start - 2998)
        writer.appendMonitor(opcode: BTSnoop.MonitorOpcode.systemNote, controllerIndex: 0xFFFF,
                             data: Array("Bluetooth monitor ver 5.66\0".utf8), unixMicroseconds: start - 2000)

        // LE Set Scan Parameters (passive, 10 ms), LE Set Scan Enable, an Inquiry answered by Command Status.
        writer.appendCommand([0x0B, 0x20, 0x07, 0x00, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00], unixMicroseconds: start - 1000)
        writer.appendEvent([0x0E, 0x04, 0x01, 0x0B, 0x20, 0x00], unixMicroseconds: start - 999)
        writer.appendCommand([0x0C, 0x20, 0x02, 0x01, 0x00], unixMicroseconds: start - 500)
        writer.appendEvent([0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00], unixMicroseconds: start - 499)
        writer.appendCommand([0x01, 0x04, 0x05, 0x33, 0x8B, 0x9E, 0x08, 0x00], unixMicroseconds: start - 400)
        writer.appendEvent([0x0F, 0x04, 0x00, 0x01, 0x01, 0x04], unixMicroseconds: start - 399)

        let radius = "02011a1aff4c0002152f234454cf6d4a0fadf2f4911ba9ffa600010001c5"
        advert(&writer, at: 0, [legacy(3, 0, 0x5CF3_7069_66CA, -78, radius)])
        advert(&writer, at: 100, [
            legacy(0, 1, 0xC605_0403_0201, -72, "02011a1bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c509"),
            legacy(0, 1, 0x4A0B_0C0D_0E0F, -55, "02011a0aff4c0010050b1c5ba3d5"),
        ])
        let eddystone: UInt64 = 0xE117_C557_5F6D
        advert(&writer, at: 200, [legacy(3, 1, eddystone, -72, "0201060303aafe1516aafe00de5dc33487f02e477d40580117c5575f6d")])
        advert(&writer, at: 300, [legacy(3, 1, eddystone, -73, "0201060303aafe1116aafe20000c3c200000000fbc000049ba")])
        advert(&writer, at: 400, [legacy(3, 1, eddystone, -71, "0201060303aafe1516aafe00de5dc33487f02e477d40580117c5575f6d")])
        advert(&writer, at: 500, [legacy(3, 0, 0x001B_DC07_31E4, -80, "0303aafe1316aafe10f8036769746875620063697472757a")])

        let name = Array("presence-fixture-extended-advertiser".utf8)
        let long = [UInt8(name.count + 1), 0x09] + name + bytes("1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000070001c5")
        let split = name.count + 2 + 10
        extended(&writer, at: 600, .incomplete, rssi: -66, Array(long[..<split]))
        extended(&writer, at: 601, .complete, rssi: -64, Array(long[split...]))

        advert(&writer, at: 700, [legacy(0, 0, 0x001B_DC07_31E5, -85, "0201061aff4c0002154142434445464748494041424344454600")])
        let whole = HCIEventEncoder.advertisingReport([legacy(3, 0, 0x5CF3_7069_66CB, -77, radius)]) ?? []
        writer.appendEvent(Array(whole.dropLast(12)), unixMicroseconds: start + 800_000)
        advert(&writer, at: 900, [legacy(3, 1, 0x7BAA_BBCC_DDEE, -60, "0201061aff4c0002154142434445464748494041424344454600010002f8")])

        writer.appendCommand([0x0C, 0x20, 0x02, 0x00, 0x00], unixMicroseconds: start + 1_000_000)
        writer.appendEvent([0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00], unixMicroseconds: start + 1_000_001)
        return writer.bytes
    }

    private static func bytes(_ hex: String) -> [UInt8] { [UInt8](hex: hex) ?? [] }

    private static func legacy(_ type: UInt8, _ addressType: UInt8, _ address: UInt64, _ rssi: Int8, _ hex: String) -> AdvertisingReport {
        AdvertisingReport(
            properties: AdvertisingEventProperties(legacyEventType: type), legacyEventType: type, addressTypeByte: addressType,
            address: BluetoothAddress(rawValue: address), rssi: rssi, data: bytes(hex)[...])
    }

    private static func advert(_ writer: inout BTSnoopWriter, at milliseconds: Int64, _ reports: [AdvertisingReport]) {
        writer.appendEvent(HCIEventEncoder.advertisingReport(reports) ?? [], unixMicroseconds: start + milliseconds * 1000)
    }

    private static func extended(_ writer: inout BTSnoopWriter, at milliseconds: Int64, _ status: AdvertisingDataStatus, rssi: Int8, _ data: [UInt8]) {
        let report = AdvertisingReport(
            properties: AdvertisingEventProperties(rawValue: 0).with(status), addressTypeByte: 1,
            address: BluetoothAddress(rawValue: 0xD011_2233_4455), rssi: rssi, txPower: nil, advertisingSID: 2,
            primaryPHY: 1, secondaryPHY: 1, data: data[...])
        writer.appendEvent(HCIEventEncoder.extendedAdvertisingReport([report]) ?? [], unixMicroseconds: start + milliseconds * 1000)
    }
}
