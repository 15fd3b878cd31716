import Foundation
import Testing
@testable import PresenceCore

/// Every entry of the vectors in data/frames (attribution in FrameVectors.swift and SOURCE.txt), each
/// expected field checked against what the parsers make of the bytes.
@Suite struct FrameVectorTests {
    @Test func theVectorFileIsPresentAndWhole() throws {
        let vectors = try FrameVectors.loaded.get()
        #expect(vectors.count == 51)
        #expect(Set(vectors.map(\.kind)) == ["adv_data", "mfg_data_with_company_id", "mfg_data_0x004c", "hci_event"])
    }

    @Test(arguments: FrameVectors.all)
    func vector(_ vector: FrameVector) {
        var expected = vector.expected
        if let disagreement = Self.disagreements[vector.id] {
            for key in disagreement.removed { expected[key] = nil }
            expected.merge(disagreement.replaced) { _, ours in ours }
        }
        switch vector.kind {
        case "adv_data":
            check(expected, Subject(frame: BeaconFrame(advertisingData: vector.bytes), data: vector.bytes[...]), vector.id)
        case "mfg_data_with_company_id":
            check(expected, Subject(frame: BeaconFrame(manufacturerData: vector.bytes[...])), vector.id)
        case "mfg_data_0x004c":
            // Home Assistant hands manufacturer data over keyed by company, without the ID: put 0x004C back.
            check(expected, Subject(frame: BeaconFrame(manufacturerData: [0x4C, 0x00] + vector.bytes)), vector.id)
        case "hci_event":
            // The first byte stands where the H4 indicator does (beacontools' packets have 0x41 there).
            let reports = Array(HCIAdvertisingReports(event: vector.bytes.dropFirst()))
            if let list = expected["reports"]?.array {
                #expect(reports.count == list.count, "\(vector.id): report count")
                for (report, entry) in zip(reports, list) {
                    check(entry.object ?? [:], Subject(report: report), vector.id)
                }
            } else if let report = reports.first {
                #expect(reports.count == 1, "\(vector.id): report count")
                check(expected, Subject(report: report), vector.id)
            } else {
                Issue.record("\(vector.id): no advertising report found")
            }
            var decoder = AdvertisementDecoder()
            var sightings: [Sighting] = []
            decoder.decode(event: vector.bytes.dropFirst(), ts: 1_763_774_734_000, into: &sightings)
        default:
            Issue.record("\(vector.id): unknown kind \(vector.kind)")
        }
    }

    /// Every prefix of every vector, read by every parser: nothing reads past the end.
    @Test(arguments: FrameVectors.all)
    func prefixesNeverCrash(_ vector: FrameVector) {
        for end in 0 ... vector.bytes.count {
            let prefix = vector.bytes[..<end]
            _ = BeaconFrame(advertisingData: prefix)
            _ = BeaconFrame(manufacturerData: prefix)
            _ = Array(ADStructures(prefix))
            _ = Array(HCIAdvertisingReports(event: prefix))
            _ = Array(HCIAdvertisingReports(event: prefix.dropFirst()))
        }
    }

    // MARK: Where our reading differs from the file, and why

    private struct Disagreement {
        let removed: [String]
        let replaced: [String: JSONValue]
    }

    /// Checked against the sources the entries name. beacontools' scanner test packets
    /// (tests/test_scanner.py) are hand-made: beacontools takes the RSSI from the packet's last byte
    /// and ignores Data_Length and the AD lengths. By the report layout (RSSI right after
    /// Data_Length bytes of data, as Linux and btmon read it), two of them say something else.
    private static let disagreements: [String: Disagreement] = [
        // Data_Length 0x19 ends the data inside the UID structure, whose own length (0x11) covers
        // only 14 of the 18 UID bytes: no UID frame, and the RSSI byte is the 0x00 after the data.
        "bt_hci_uid": Disagreement(removed: ["namespace", "instance"], replaced: ["frame": .null, "rssi": .number(0)]),
        // Data_Length 0x19 cuts the 0x1A-long iBeacon structure: no frame; the RSSI byte is the
        // first byte of the major (0x00).
        "bt_hci_ibeacon": Disagreement(removed: ["uuid", "major", "minor"], replaced: ["frame": .null, "rssi": .number(0)]),
        // The service data structure (length 0x11) ends after the 12 encrypted bytes; salt and MIC
        // lie outside it. beacontools reads them anyway, little-endian; we report them absent.
        "bt_eddystone_tlm_encrypted": Disagreement(removed: [], replaced: ["salt": .null, "mic": .null]),
        // android-beacon-library only re-encodes these bytes. The service data structure declares
        // 0x15 (20 data bytes) where 16 remain: a truncated structure, ignored; even read leniently
        // its 14-byte frame would be short of an eTLM's 18.
        "abl_eddystone_tlm": Disagreement(removed: ["service_data_frame_byte", "version_byte"], replaced: ["frame": .null]),
    ]

    // MARK: Checking one expectation

    private struct Subject {
        var frame: BeaconFrame
        var data: ArraySlice<UInt8>?
        var report: AdvertisingReport?

        init(frame: BeaconFrame, data: ArraySlice<UInt8>? = nil) {
            self.frame = frame
            self.data = data
        }

        init(report: AdvertisingReport) {
            frame = BeaconFrame(advertisingData: report.data)
            data = report.data
            self.report = report
        }

        func structure(_ type: UInt8) -> ADStructure? {
            data.flatMap { ADStructures($0).first { $0.type == type } }
        }
    }

    private static let frameNames: [String: FrameKind] = [
        "ibeacon": .iBeacon, "altbeacon": .altBeacon, "eddystone_uid": .eddystoneUID, "eddystone_url": .eddystoneURL,
        "eddystone_tlm": .eddystoneTLM, "eddystone_etlm": .eddystoneEncryptedTLM, "eddystone_eid": .eddystoneEID,
        // A Tilt hydrometer sends a valid iBeacon; ibeacon-ble chooses to ignore it, we do not.
        "ibeacon(tilt)": .iBeacon,
        // Not beacon frames: advertisers we name by address.
        "exposure_notification": .other, "cj_monitor": .other,
    ]

    /// Fields outside what Frames decodes, with the reason they are not checked here.
    private static let outOfScope: [String: String] = [
        "distance_m_rounded": "a distance estimate (the engine's job, not the frame's)",
        "after_update_rssi_-70_distance_m_rounded": "a distance estimate",
        "ibeacon_ble_returns": "ibeacon-ble's product filter",
        "transient_if_name_like_tesla": "ibeacon-ble's product logic on the device name",
        "temperature": "CJ monitor vendor payload", "humidity": "CJ monitor vendor payload", "light": "CJ monitor vendor payload",
    ]

    private func check(_ expected: [String: JSONValue], _ subject: Subject, _ id: String) {
        let frame = subject.frame
        for (key, value) in expected.sorted(by: { $0.key < $1.key }) {
            let what = "\(id).\(key)"
            switch key {
            case "frame":
                let kind = value.isNull ? .other : Self.frameNames[value.string ?? ""]
                #expect(frame.kind == kind, "\(what): \(frame.kind) vs \(value)")
            case "parses":
                #expect((frame.kind != .other) == value.bool, "\(what)")
            case "uuid":
                if case .iBeacon(let beacon) = frame { #expect(beacon.uuidText == value.string, "\(what)") } else { Issue.record("\(what): not an iBeacon") }
            case "major", "minor":
                if case .iBeacon(let beacon) = frame {
                    #expect(Int(key == "major" ? beacon.major : beacon.minor) == value.int, "\(what)")
                } else { Issue.record("\(what): not an iBeacon") }
            case "tx_power", "power":
                #expect(statedPower(frame) == value.int, "\(what): \(String(describing: statedPower(frame)))")
            case "distance":
                // No distance from this frame: it states no usable power at 1 m.
                #expect(value.isNull && frame.txPowerAt1m == nil, "\(what)")
            case "cypress_temperature_x100", "cypress_humidity_x100":
                // Cypress CYALKIT-E02 packs an SHT sensor's readings into the minor (beacontools' formulas).
                if case .iBeacon(let beacon) = frame {
                    let raw = Double(key.contains("temperature") ? beacon.minor & 0xFF : beacon.minor >> 8) * 256
                    let reading = key.contains("temperature") ? 175.72 * raw / 65536 - 46.85 : 125 * raw / 65536 - 6
                    #expect(Int((reading * 100).rounded()) == value.int, "\(what)")
                } else { Issue.record("\(what): not an iBeacon") }
            case "namespace", "instance":
                if case .eddystoneUID(let uid) = frame {
                    #expect((key == "namespace" ? uid.namespaceText : uid.instanceText) == value.string, "\(what)")
                } else { Issue.record("\(what): not an Eddystone-UID") }
            case "url":
                if case .eddystoneURL(let url) = frame { #expect(url.url == value.string, "\(what)") } else { Issue.record("\(what): not an Eddystone-URL") }
            case "voltage_mv", "temperature_c", "temperature_c_approx", "advertising_count", "seconds_since_boot_raw":
                checkTelemetry(key, value, frame, what)
            case "encrypted_data_hex", "salt", "mic":
                if case .eddystoneEncryptedTLM(let etlm) = frame {
                    switch key {
                    case "encrypted_data_hex": #expect(etlm.encryptedData.description == value.string, "\(what)")
                    case "salt": #expect(etlm.salt.map(Int.init) == value.int, "\(what)")
                    default: #expect(etlm.mic.map(Int.init) == value.int, "\(what)")
                    }
                } else { Issue.record("\(what): not an eTLM") }
            case "eid_hex":
                if case .eddystoneEID(let eid) = frame {
                    #expect(String(format: "%016llx", eid.ephemeralID) == value.string, "\(what)")
                } else { Issue.record("\(what): not an Eddystone-EID") }
            case "mfg_id", "beacon_id", "ref_rssi", "mfg_reserved", "id1", "id2", "id3":
                checkAltBeacon(key, value, frame, what)
            case "rpi", "aem_hex":
                // Exposure Notification service data (UUID 0xFD6F): 16-byte RPI, then 4-byte AEM.
                let data = subject.structure(ADStructure.Types.serviceData16).map { Array($0.data) } ?? []
                #expect(data.prefix(2) == [0x6F, 0xFD], "\(what): service UUID")
                #expect((key == "rpi" ? Array(data.dropFirst(2).prefix(16)) : Array(data.dropFirst(18))).hex == value.string, "\(what)")
            case "name", "local_name":
                let name = subject.structure(ADStructure.Types.completeLocalName).map { String(decoding: $0.data, as: UTF8.self) }
                #expect(name == value.string, "\(what)")
            case "tx_power_level", "tx_power_ad":
                let level = subject.structure(ADStructure.Types.txPowerLevel)?.data.first.map { Int(Int8(bitPattern: $0)) }
                #expect(level == value.int, "\(what)")
            case "manufacturer_data":
                let data = subject.structure(ADStructure.Types.manufacturerSpecific).map { Array($0.data) } ?? []
                for (company, hex) in value.object ?? [:] {
                    #expect(Int(data.prefix(2).reversed().reduce(0) { $0 << 8 | Int($1) }) == Int(company), "\(what): company")
                    #expect(data.dropFirst(2).hex == hex.string, "\(what)")
                }
            case "mac", "rssi", "event_type", "addr_type":
                guard let report = subject.report else {
                    // Manufacturer-data vectors carry no report; their rssi came with the advertisement object.
                    #expect(key == "rssi", "\(what): no report to check")
                    continue
                }
                switch key {
                case "mac": #expect(report.address.description == value.string, "\(what)")
                case "rssi": #expect(report.rssi.map(Int.init) == value.int, "\(what)")
                case "event_type": #expect(report.legacyEventType.map(Int.init) == value.int, "\(what)")
                default: #expect(Int(report.addressTypeByte) == value.int, "\(what)")
                }
            case "theengs_output":
                checkTheengs(value.object ?? [:], frame, what)
            case "reports":
                Issue.record("\(what): nested reports")
            default:
                if Self.outOfScope[key] == nil { Issue.record("\(what): a field this test does not know") }
            }
        }
    }

    /// The power figure the frame states, as sent (0 m for Eddystone, 1 m otherwise).
    private func statedPower(_ frame: BeaconFrame) -> Int? {
        switch frame {
        case .iBeacon(let beacon): Int(beacon.measuredPower)
        case .altBeacon(let beacon): Int(beacon.referenceRSSI)
        case .eddystoneUID(let uid): Int(uid.txPowerAt0m)
        case .eddystoneURL(let url): Int(url.txPowerAt0m)
        case .eddystoneEID(let eid): Int(eid.txPowerAt0m)
        default: nil
        }
    }

    private func checkTelemetry(_ key: String, _ value: JSONValue, _ frame: BeaconFrame, _ what: String) {
        guard case .eddystoneTLM(let tlm) = frame else {
            Issue.record("\(what): not an Eddystone-TLM")
            return
        }
        switch key {
        case "voltage_mv": #expect(Int(tlm.batteryMillivolts) == value.int, "\(what)")
        case "temperature_c": #expect(tlm.temperature == value.number, "\(what)")
        case "temperature_c_approx": #expect(abs((tlm.temperature ?? .nan) - (value.number ?? 0)) < 0.01, "\(what)")
        case "advertising_count": #expect(Int(tlm.advertisingCount) == value.int, "\(what)")
        default:
            #expect(Int(tlm.uptimeDeciseconds) == value.int, "\(what)")
            #expect(tlm.uptime == Double(value.int ?? 0) / 10, "\(what): SEC_CNT counts tenths of a second")
        }
    }

    private func checkAltBeacon(_ key: String, _ value: JSONValue, _ frame: BeaconFrame, _ what: String) {
        guard case .altBeacon(let beacon) = frame else {
            Issue.record("\(what): not an AltBeacon")
            return
        }
        switch key {
        case "mfg_id": #expect(String(format: "0x%04x", beacon.manufacturer) == value.string, "\(what)")
        case "beacon_id":
            let text = beacon.id1Text.replacingOccurrences(of: "-", with: "") + String(format: "%04x%04x", beacon.id2, beacon.id3)
            #expect(text == value.string, "\(what)")
        case "ref_rssi": #expect(Int(beacon.referenceRSSI) == value.int, "\(what)")
        case "mfg_reserved": #expect(beacon.reserved.map(Int.init) == value.int, "\(what)")
        case "id1": #expect(beacon.id1Text == value.string, "\(what)")
        case "id2": #expect(Int(beacon.id2) == value.int, "\(what)")
        default: #expect(Int(beacon.id3) == value.int, "\(what)")
        }
    }

    /// theengs/decoder names products and decodes their payloads. The iBeacon-level fields are ours
    /// to check; the product readings double-check major, minor and the power byte, by the formulas
    /// the products use; the product names are theengs' own.
    private func checkTheengs(_ output: [String: JSONValue], _ frame: BeaconFrame, _ what: String) {
        guard case .iBeacon(let beacon) = frame else {
            Issue.record("\(what): iBeacon framing not recognised")
            return
        }
        let model = output["model_id"]?.string ?? ""
        let powerByte = UInt8(bitPattern: beacon.measuredPower)
        for (key, value) in output.sorted(by: { $0.key < $1.key }) {
            let field = "\(what).\(key)"
            switch key {
            case "uuid": #expect(beacon.uuidText.replacingOccurrences(of: "-", with: "") == value.string, "\(field)")
            case "major": #expect(Int(beacon.major) == value.int, "\(field)")
            case "minor": #expect(Int(beacon.minor) == value.int, "\(field)")
            case "txpower": #expect(Int(beacon.measuredPower) == value.int, "\(field)")
            case "mfid": #expect(value.string == "4c00", "\(field)")
            case "batt":
                let battery = switch model {
                case "BM2": Int(powerByte)
                case "BM6": Int(beacon.major & 0xFF)
                default: Int(beacon.minor >> 8)
                }
                #expect(battery == value.int, "\(field)")
            case "tempc":
                let celsius = model == "TILT" ? ((Double(beacon.major) - 32) * 5 / 9).rounded() : Double(beacon.minor & 0xFF)
                #expect(celsius == value.number, "\(field)")
            case "tempf":
                let fahrenheit = model == "TILT" ? Double(beacon.major) : Double(beacon.minor & 0xFF) * 9 / 5 + 32
                #expect(fahrenheit == value.number, "\(field)")
            case "gravity": #expect(Double(beacon.minor) / 1000 == value.number, "\(field)")
            case "volt": #expect(Double(powerByte) / 10 == value.number, "\(field)")
            case "brand", "model", "model_id", "type", "track", "device", "cidc", "prmac", "color":
                continue
            default:
                Issue.record("\(field): a theengs field this test does not know")
            }
        }
    }
}
