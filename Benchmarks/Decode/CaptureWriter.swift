import Foundation
import PresenceCore

/// `presence-bench capture`: writes a btsnoop capture (datalink 2001) of advertising reports at a
/// steady rate, for measuring what a scanner node costs at that rate (`scripts/scanner-load.sh`).
enum CaptureWriter {
    static func main(_ arguments: [String]) {
        func value(_ flag: String) -> String? { benchArgument(arguments, flag) }
        guard let out = value("--out") else {
            print("presence-bench capture --out FILE [--rate 2000] [--seconds 60] [--advertisers 300]")
            exit(64)
        }
        let rate = Int(value("--rate") ?? "") ?? 2_000
        let seconds = Int(value("--seconds") ?? "") ?? 60
        let advertisers = max(1, Int(value("--advertisers") ?? "") ?? 300)
        var writer = BTSnoopWriter(datalink: .monitor)
        let start: Int64 = 1_763_774_734_000_000
        for index in 0 ..< rate * seconds {
            let advertiser = index % advertisers
            let data: [UInt8] = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15,
                                 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
                                 0x00, 0x09, UInt8(advertiser >> 8), UInt8(advertiser & 0xFF), 0xC5]
            let report = AdvertisingReport(properties: AdvertisingEventProperties(legacyEventType: 3), legacyEventType: 3, addressTypeByte: 0,
                                           address: BluetoothAddress(rawValue: 0x001B_DC00_0000 + UInt64(advertiser)),
                                           rssi: Int8(-50 - index % 40), data: data[...])
            writer.appendEvent(HCIEventEncoder.advertisingReport([report]) ?? [], unixMicroseconds: start + Int64(index) * 1_000_000 / Int64(rate))
        }
        do {
            try Data(writer.bytes).write(to: URL(fileURLWithPath: out))
            print("wrote \(rate * seconds) reports over \(seconds) s (\(rate)/s, \(advertisers) advertisers) to \(out)")
        } catch {
            print("cannot write \(out): \(error)")
            exit(1)
        }
    }
}
