import PresenceCore

#if canImport(Glibc)
import Glibc
#endif

/// `presence-bench decode [--reports N] [--advertisers N] [--hash]`: how fast one core turns HCI
/// advertising events into sightings. The events are built from the shared test vectors' frames
/// (iBeacon, AltBeacon, Eddystone UID/TLM/URL, phones on private addresses, other devices on public
/// ones) spread over many advertisers, one or two reports per event as controllers deliver them;
/// each pass decodes them all with the default policy, as a scanner node would.
enum DecodeBenchmark {
    static func main(_ arguments: [String]) {
        var reports = 20_000_000
        var advertisers = 400
        var hashing = false
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? Int(arguments[index + 1]) : nil
            switch arguments[index] {
            case "--reports" where value != nil: reports = value ?? reports; index += 1
            case "--advertisers" where value != nil: advertisers = value ?? advertisers; index += 1
            case "--hash": hashing = true
            default:
                print("usage: presence-bench decode [--reports N] [--advertisers N] [--hash]")
                exit(arguments[index] == "--help" ? 0 : 64)
            }
            index += 1
        }

        let events = Mix.events(advertisers: max(1, advertisers))
        let perPass = events.reduce(0) { $0 + Array(HCIAdvertisingReports(event: $1)).count }
        let passes = max(1, reports / perPass)
        let options = AdvertisementDecoder.Options(hashing: hashing ? AddressHasher(secret: "benchmark") : nil)

        // One warm-up pass fills the decoder's caches, as a running scanner's are.
        var decoder = AdvertisementDecoder(options: options)
        var sightings: [Sighting] = []
        sightings.reserveCapacity(perPass)
        for event in events { decoder.decode(event: event[...], ts: 0, into: &sightings) }

        var published = 0
        var ts: Int64 = 1_763_774_734_000
        let clock = ContinuousClock()
        let cpuStart = cpuTime()
        let elapsed = clock.measure {
            for _ in 0 ..< passes {
                sightings.removeAll(keepingCapacity: true)
                for event in events {
                    decoder.decode(event: event[...], ts: ts, into: &sightings)
                    ts &+= 1
                }
                published &+= sightings.count
            }
        }
        let cpu = cpuTime() - cpuStart
        let total = Double(passes * perPass)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let statistics = decoder.statistics

        print("decode: \(passes * perPass) reports in \(events.count) distinct events of \(perPass) reports, \(advertisers) advertisers\(hashing ? ", addresses hashed" : "")")
        print("| reports/s | ns/report | CPU s | wall s | sightings | dropped |")
        print("|---|---|---|---|---|---|")
        print("| \(format(total / seconds, 0)) | \(format(seconds * 1e9 / total, 1)) | \(format(cpu, 2)) | \(format(seconds, 2)) | \(published) | \(statistics.dropped) |")
        let kinds = FrameKind.allCases.map { "\($0.name) \(statistics.frames($0))" }.joined(separator: ", ")
        print("frames: \(kinds)")
        print("allocations: not counted here; heaptrack at two --reports counts shows the per-report figure (0 in steady state when measured)")
    }

    private static func cpuTime() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) * 1e-6
    }

    private static func format(_ value: Double, _ decimals: Int) -> String {
        var scaled = (value * pow10(decimals)).rounded()
        if decimals == 0 { return String(Int(scaled)) }
        let negative = scaled < 0
        scaled = abs(scaled)
        let whole = Int(scaled) / Int(pow10(decimals))
        let fraction = String(Int(scaled) % Int(pow10(decimals)))
        return (negative ? "-" : "") + "\(whole)." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }

    private static func pow10(_ exponent: Int) -> Double {
        (0 ..< exponent).reduce(1) { value, _ in value * 10 }
    }
}

/// The traffic: frames from data/frames/vectors.json, with ids and addresses varied per
/// advertiser so the decoder meets as many distinct beacons as a venue has.
private enum Mix {
    static func events(advertisers: Int) -> [[UInt8]] {
        var events: [[UInt8]] = []
        var pending: [AdvertisingReport] = []
        for advertiser in 0 ..< advertisers {
            for (slot, report) in reports(for: advertiser).enumerated() {
                pending.append(report)
                // About one event in four carries two reports, as coalescing controllers send them.
                if pending.count == 2 || (advertiser + slot) % 4 != 0 {
                    if let event = HCIEventEncoder.advertisingReport(pending) { events.append(event) }
                    pending.removeAll()
                }
            }
        }
        if let event = HCIEventEncoder.advertisingReport(pending), !pending.isEmpty { events.append(event) }
        return events
    }

    /// What one advertiser sends in a pass: 60 % of advertisers are iBeacons, 10 % AltBeacons,
    /// 10 % Eddystone beacons (UID, TLM, UID, URL), 15 % phones on private addresses, 5 % other
    /// devices on public addresses.
    private static func reports(for advertiser: Int) -> [AdvertisingReport] {
        let n = UInt16(truncatingIfNeeded: advertiser)
        let rssi = Int8(-40 - advertiser % 50)
        let serial = UInt64(truncatingIfNeeded: advertiser) & 0xFFFF_FFFF
        let randomStatic = 0xD411 << 32 | serial
        let resolvable = 0x4A11 << 32 | serial
        let publicAddress = 0x001B << 32 | serial
        switch advertiser % 20 {
        case 0 ..< 12:
            // bt_ibeacon / radius_ibeacon_scan_example, the minor varied.
            var data = hex("02011a1aff4c0002152f234454cf6d4a0fadf2f4911ba9ffa600010001c5")
            data[27] = UInt8(n >> 8)
            data[28] = UInt8(n & 0xFF)
            return [report(0x03, 1, randomStatic, rssi, data)]
        case 12, 13:
            // abl_altbeacon, id3 varied.
            var data = hex("02011a1bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c509")
            data[27] = UInt8(n >> 8)
            data[28] = UInt8(n & 0xFF)
            return [report(0x00, 1, randomStatic, rssi, data)]
        case 14, 15:
            // xorbit's Eddystone UID (instance varied), TLM and URL from one beacon.
            var uid = hex("0201060303aafe1516aafe00de5dc33487f02e477d40580117c5575f6d")
            uid[28] = UInt8(n & 0xFF)
            uid[27] = UInt8(n >> 8)
            let tlm = hex("0201060303aafe1116aafe20000c3c200000000fbc000049ba")
            let url = hex("0201060303aafe1316aafe10de02746f6b2e74632f576a2f424356")
            return [uid, tlm, uid, url].map { report(0x03, 1, randomStatic, rssi, $0) }
        case 16, 17, 18:
            // A phone: Apple manufacturer data on a resolvable private address.
            return [report(0x00, 1, resolvable, rssi, hex("02011a0aff4c0010050b1c5ba3d5"))]
        default:
            // bt_hci_cjmonitor's sensor on a public address.
            return [report(0x00, 0, publicAddress, rssi, hex("02010605021a18001809ff7204fe10bc0c375909094d6f6e2035363433"))]
        }
    }

    private static func report(_ type: UInt8, _ addressType: UInt8, _ address: UInt64, _ rssi: Int8, _ data: [UInt8]) -> AdvertisingReport {
        AdvertisingReport(
            properties: AdvertisingEventProperties(legacyEventType: type), legacyEventType: type, addressTypeByte: addressType,
            address: BluetoothAddress(rawValue: address), rssi: rssi, data: data[...])
    }

    private static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            bytes.append(UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) ?? 0)
        }
        return bytes
    }
}
