import Foundation
import PresenceCore
import Testing

/// The foreign nodes' messages kept in `Tests/Fixtures/foreign/` (origins in its SOURCE.txt), read
/// as the aggregator reads them with `--espresense espresense --openmqttgateway home`.
@Suite struct ForeignReportTests {
    static let topics = (try? ForeignTopics(espresense: "espresense", openMQTTGateway: "home", theengs: "home")) ?? ForeignTopics()

    /// What `topic` carries and its node's name as written, as the aggregator matches its bytes.
    static func match(_ topic: String) -> (kind: ForeignTopics.Match.Kind, name: String)? {
        var topic = topic
        return topic.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            return topics.match(bytes).map { ($0.kind, String(decoding: UnsafeRawBufferPointer(rebasing: bytes[$0.node]), as: UTF8.self)) }
        }
    }

    /// The node key of a name, from its bytes as the aggregator reads it.
    static func nodeKey(_ name: String) -> String? {
        var name = name
        return name.withUTF8 { ForeignTopics.nodeKey(for: UnsafeRawBufferPointer($0)) }
    }

    /// What the aggregator makes of a message: `node identity rssi tx`, `status node online`, a
    /// rejection's reason, or `ignored`.
    static func reading(topic: String, payload: String) -> String {
        var identity = CanonicalIdentityBuffer()
        var bytes = Array(payload.utf8)
        return bytes.withUnsafeMutableBytes { raw -> String in
            let payload = UnsafeRawBufferPointer(raw)
            let read: Result<ForeignSighting, ForeignRejection>
            guard let (kind, name) = match(topic) else { return "ignored" }
            let key = nodeKey(name) ?? "?"
            switch kind {
            case .status: return "status \(key) \(ForeignTopics.isOnline(payload).map { "\($0)" } ?? "unreadable")"
            case .espresenseReport: read = ESPresenseReport.read(payload, identity: &identity)
            case .gatewayAdvertisement: read = GatewayAdvertisement.read(payload, identity: &identity)
            }
            switch read {
            case .success(let sighting): return "\(key) \(identity.text) \(sighting.rssi) \(sighting.tx.map(String.init) ?? "-")"
            case .failure(let rejection): return "\(key) \(rejection.reason)"
            }
        }
    }

    static func fixture(_ name: String) throws -> [(topic: String, payload: String)] {
        let url = TestFiles.fixtures.appendingPathComponent("foreign/\(name).jsonl")
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return (object?["topic"] as? String ?? "", object?["payload"] as? String ?? "")
        }
    }

    @Test func espresenseFixtures() throws {
        let read = try Self.fixture("espresense").map { Self.reading(topic: $0.topic, payload: $0.payload) }
        #expect(read == [
            "unknown_room ibeacon:41caeee6-5dd2-467c-9b9d-ef31cbce7445:100:40004 -97 -59",
            "unknown_room espresense:msft:cdp:0922 -40 -71",
            "unknown_room mac:24:4b:03:d7:27:80 -84 -71",
            "unknown_room espresense:sd:0xfe9f -54 -71",
            "unknown_room espresense:md:0901:12 -85 -71",
            // Firmware before 3.0 published a room's devices together on its room topic: not read.
            "ignored",
            "ignored",
            // Firmware 4 writes a fractional rssi.
            "balkon espresense:apple:1006:10-12 -85 -65",
            "status study true",
            "status study false",
            "ignored",
        ])
    }

    @Test func openMQTTGatewayFixtures() throws {
        let read = try Self.fixture("openmqttgateway").map { Self.reading(topic: $0.topic, payload: $0.payload) }
        #expect(read == [
            // Service data that is not Eddystone's: the address.
            "openmqttgateway mac:45:e1:74:12:6e:00 -89 -",
            "openmqttgateway mac:c7:fa:ad:13:2c:00 -68 -",
            "openmqttgateway ibeacon:1de4b189-115e-45f6-b44e-509352269977:0:0 -79 -66",
            "openmqttgateway ibeacon:1de4b189-115e-45f6-b44e-509352269977:0:0 -77 -66",
            // `pubuuid4topic`: the uuid in the topic; the identity is the payload's.
            "openmqttgateway ibeacon:1de4b189-115e-45f6-b44e-509352269977:0:0 -76 -66",
            // The presence topic is not read.
            "ignored",
            "ignored",
            "ignored",
            // A TX power level is at 0 m: 41 dB more than at 1 m.
            "openmqttgateway_esp32_ble_house mac:45:f6:8a:76:86:c5 -55 -29",
            "openmqttgateway_esp32_ble_house mac:59:d6:88:02:47:b8 -56 -",
            "openmqttgateway no_rssi",
            "status openmqttgateway true",
            "status openmqttgateway false",
            "openmqttgateway no_rssi",
        ])
    }

    @Test func theengsFixtures() throws {
        let read = try Self.fixture("theengs").map { Self.reading(topic: $0.topic, payload: $0.payload) }
        #expect(read == [
            // A three-byte "address": no identity.
            "theengsgateway bad_id",
            "status theengsgateway true",
            "status theengsgateway false",
            "theengsgateway no_rssi",
            // Theengs Decoder's output alone, without the gateway's `id` and `rssi`.
            "theengsgateway no_rssi",
            "theengsgateway no_rssi",
            "ignored",
            // Apple's "nearby" manufacturer data is no iBeacon: the address.
            "openmqttgateway mac:54:94:5e:9f:64:c4 -74 -29",
        ])
    }

    @Test func rawBeaconFramesBecomeTheirIdentities() {
        let iBeacon = #"{"id":"C4:7C:8D:6A:2B:01","rssi":-70,"manufacturerdata":"4c000215E2C56DB5DFFB48D2B060D0F5A71096E000070001c5"}"#
        #expect(Self.reading(topic: "home/gw-1/BTtoMQTT/C47C8D6A2B01", payload: iBeacon) == "gw-1 ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:1 -70 -59")
        let altBeacon = #"{"id":"c4:7c:8d:6a:2b:02","rssi":-71,"manufacturerdata":"1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500"}"#
        #expect(Self.reading(topic: "home/gw-1/BTtoMQTT/x", payload: altBeacon) == "gw-1 altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:2 -71 -59")
        let eddystone = #"{"id":"c4:7c:8d:6a:2b:03","rssi":-72,"servicedatauuid":"0xfeaa","servicedata":"00e800010203040506070809aabbccddeeff0000"}"#
        #expect(Self.reading(topic: "home/gw-1/BTtoMQTT/x", payload: eddystone) == "gw-1 eddystone:00010203040506070809:aabbccddeeff -72 -65")
        let decodedAsText = #"{"id":"c4:7c:8d:6a:2b:04","rssi":-73,"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":"0007","minor":"1"}"#
        #expect(Self.reading(topic: "home/gw-1/BTtoMQTT/x", payload: decodedAsText) == "gw-1 ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:1 -73 -")
    }

    @Test func espresenseIBeaconsAreCanonicalWhateverTheirSpelling() {
        let cases = [
            ("iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-0-65535", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:0:65535"),
            ("iBeacon:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0-007-01", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:1"),
            ("iBeacon:e2c56db5dffb48d2b060d0f5a71096e0-1-1", "espresense:iBeacon:e2c56db5dffb48d2b060d0f5a71096e0-1-1"),
            ("iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-65536-1", "espresense:iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-65536-1"),
            ("iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1", "espresense:iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1"),
        ]
        for (id, identity) in cases {
            #expect(Self.reading(topic: "espresense/devices/x/hall", payload: #"{"id":"\#(id)","rssi":-60}"#) == "hall \(identity) -60 -", "\(id)")
        }
    }

    @Test func espresenseEddystoneIsReadWithoutTheRepeatedByte() {
        // Namespace 00010203040506070809 printed with its fifth byte (04) twice.
        let report = #"{"id":"eddy:0001020304040506070809-aabbccddeeff","rssi":-60,"distance":nan,"raw":inf,"var":-inf}"#
        #expect(Self.reading(topic: "espresense/devices/x/hall", payload: report) == "hall eddystone:00010203040506070809:aabbccddeeff -60 -")
        let plain = #"{"id":"eddy:00010203040506070809-AABBCCDDEEFF","rssi":-60}"#
        #expect(Self.reading(topic: "espresense/devices/x/hall", payload: plain) == "hall eddystone:00010203040506070809:aabbccddeeff -60 -")
        // Neither: kept as ESPresense's own id.
        let odd = #"{"id":"eddy:0001-aabb","rssi":-60}"#
        #expect(Self.reading(topic: "espresense/devices/x/hall", payload: odd) == "hall espresense:eddy:0001-aabb -60 -")
    }

    @Test func uuidsAndAddressesAreSpelledCanonicallyAfterWhatCameBefore() {
        func spelled(_ text: String, prefix: StaticString, _ append: (inout CanonicalIdentityBuffer, UnsafeRawBufferPointer) -> Bool) -> String? {
            var identity = CanonicalIdentityBuffer()
            identity.append(prefix)
            return Array(text.utf8).withUnsafeBytes { append(&identity, $0) } ? identity.text : nil
        }
        let uuid = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0"
        for text in ["E2C56DB5DFFB48D2B060D0F5A71096E0", "e2c56db5-dffb-48d2-b060-d0f5a71096e0", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"] {
            #expect(spelled(text, prefix: "ibeacon:") { $0.appendUUID($1) } == uuid, "\(text)")
        }
        for text in ["E2C56DB5DFFB48D2B060D0F5A71096E", "e2c56db5-dffb48d2--b060-d0f5a71096e0", "g2c56db5dffb48d2b060d0f5a71096e0", "e2c56db5-dffb-48d2-b060-d0f5a71096e0-"] {
            #expect(spelled(text, prefix: "ibeacon:") { $0.appendUUID($1) } == nil, "\(text)")
        }
        for text in ["C4:7C:8D:6A:2B:01", "c4-7c-8d-6a-2b-01", "C47C8D6A2B01"] {
            #expect(spelled(text, prefix: "mac:") { $0.appendAddress($1) } == "mac:c4:7c:8d:6a:2b:01", "\(text)")
        }
        for text in ["C4:7C:8D:6A:2B:0G", "C4.7C.8D.6A.2B.01", "C47C8D6A2B0", "C4:7C:8D:6A:2B01:"] {
            #expect(spelled(text, prefix: "mac:") { $0.appendAddress($1) } == nil, "\(text)")
        }
    }

    @Test func hostileReportsAreRejectedWithTheirReason() {
        let cases: [(String, String)] = [
            (#"not json"#, "not_json"),
            (#"{"id":"iBeacon:x","rssi":-60"#, "not_json"),
            (#"{"rssi":-60}"#, "no_id"),
            (#"{"id":"has space","rssi":-60}"#, "bad_id"),
            (#"{"id":""# + String(repeating: "a", count: 129) + #"","rssi":-60}"#, "bad_id"),
            (#"{"id":"irk:00","rssi":"-60"}"#, "bad_rssi"),
            (#"{"id":"irk:00","rssi":1e300}"#, "bad_rssi"),
            (#"{"id":"irk:00","rssi":-300}"#, "bad_rssi"),
            (#"{"id":"irk:00"}"#, "no_rssi"),
            (#"{"id":"irk:00","rssi":-60,"x":"# + String(repeating: "[", count: 40) + "}", "not_json"),
            (#"{"id":"irk:00","rssi":-60,"pad":""# + String(repeating: "x", count: 5_000) + #""}"#, "too_large"),
        ]
        for (payload, reason) in cases {
            #expect(Self.reading(topic: "espresense/devices/x/hall", payload: payload) == "hall \(reason)", "\(payload.prefix(60))")
        }
        #expect(Self.reading(topic: "home/gw/BTtoMQTT/x", payload: #"{"id":"zz:zz:zz:zz:zz:zz","rssi":-60}"#) == "gw bad_id")
        #expect(Self.reading(topic: "home/gw/BTtoMQTT/x", payload: #"{"id":"aa:bb:cc:dd:ee:ff","rssi":-60,"major":70000,"minor":1,"uuid":"e2c56db5dffb48d2b060d0f5a71096e0"}"#)
            == "gw mac:aa:bb:cc:dd:ee:ff -60 -")
        #expect(Self.reading(topic: "home/gw/BTtoMQTT/x", payload: #"{"id":"aa:bb:cc:dd:ee:ff","rssi":-60,"manufacturerdata":"4c0002"}"#)
            == "gw mac:aa:bb:cc:dd:ee:ff -60 -")
    }

    @Test func topicsAndNodeNames() {
        let topics = Self.topics
        #expect(topics.subscriptions == ["espresense/devices/+/+", "espresense/rooms/+/status", "home/+/BTtoMQTT/+", "home/+/LWT"])
        #expect(Self.match("espresense/devices/a/b/c") == nil)
        #expect(Self.match("espresense/devices/id/") == nil)
        #expect(Self.match("espresense/rooms/hall/telemetry") == nil)
        #expect(Self.match("home/gw/BTtoMQTT") == nil)
        #expect(Self.match("homes/gw/LWT") == nil)
        #expect(Self.match("presence/v1/sightings/gw") == nil)
        #expect(Self.match("espresense/devices/iBeacon:x-1-2/Living Room")?.name == "Living Room")
        #expect(Self.match("home/OMG_ESP32/LWT")?.kind == .status)
        #expect(ForeignTopics.nodeKey(for: "Living Room") == "living-room")
        for name in ["Living Room", "kitchen", "Salle Été", "_hidden", "Ünder", String(repeating: "a", count: 65), ""] {
            #expect(Self.nodeKey(name) == ForeignTopics.nodeKey(for: Substring(name)).map(String.init), "\(name)")
        }
        #expect(Self.nodeKey("Salle Été") == "salle--t-")
        #expect(ForeignTopics.nodeKey(for: "kitchen") == "kitchen")
        #expect(ForeignTopics.nodeKey(for: "_hidden") == nil)
        #expect(ForeignTopics.nodeKey(for: Substring(String(repeating: "a", count: 65))) == nil)
        #expect(ForeignTopics.isOnline(UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
        #expect(throws: ValueError.self) { try ForeignTopics(espresense: "a/+", openMQTTGateway: nil, theengs: nil) }
        let both = try? ForeignTopics(espresense: nil, openMQTTGateway: "home", theengs: "home")
        #expect(both?.gateways == ["home"])
    }

    @Test func espresenseIdentitiesAreRegistrable() throws {
        #expect(try Identity(parsing: "espresense:irk:0123abcd").text == "espresense:irk:0123abcd")
        #expect(try Identity(parsing: "ESPRESENSE:apple:1006:10-12").text == "espresense:apple:1006:10-12")
        #expect(throws: ValueError.self) { try Identity(parsing: "espresense:") }
        #expect(throws: ValueError.self) { try Identity(parsing: "espresense:two words") }
        #expect(Identity.enclosingRegions(of: "espresense:iBeacon:x") == [])
    }
}
