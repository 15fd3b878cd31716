import Testing
@testable import PresenceCore

/// The iBeacon a node transmits (`presence-scanner --advertise`): bytes a published parser agrees
/// with, and that this project's own decoder reads back to the node's identity and power.
@Suite struct IBeaconAdvertisingTests {
    /// beacontools' iBeacon vector (citruz/beacontools tests/test_parser.py, in the project's
    /// vectors.json as `bt_ibeacon`): Flags 02 01 06, then the 26-byte manufacturer structure.
    @Test func theBytesAreThoseOfAPublishedIBeacon() throws {
        let vector = try #require(FrameVectors.all.first { $0.id == "bt_ibeacon" }, "bt_ibeacon missing from vectors.json")
        let uuid = try #require(vector.expected["uuid"]?.string)
        let major = try #require(vector.expected["major"]?.int)
        let minor = try #require(vector.expected["minor"]?.int)
        let tx = try #require(vector.expected["tx_power"]?.int)
        let beacon = try IBeacon(identity: "ibeacon:\(uuid):\(major):\(minor)", measuredPower: tx)
        #expect(beacon.advertisingData.hex == vector.bytes.hex)
    }

    @Test func theContractsExampleIsBuiltFromItsIdentity() throws {
        // FrameIdentityTests reads these bytes as ibeacon:f7826da6-…:2:3 with tx -59; upper case and
        // leading zeros in the identity are accepted as the contract's parser accepts them.
        let beacon = try IBeacon(identity: "ibeacon:F7826DA6-4FA2-4E98-8024-BC5B71E0893E:02:0003", measuredPower: -59)
        #expect(beacon.advertisingData.hex == "0201061aff4c000215f7826da64fa24e988024bc5b71e0893e00020003c5")
    }

    /// Through the path a neighbouring node takes: an HCI advertising report (ADV_NONCONN_IND from
    /// a public address) decoded by the default decoder into a sighting.
    @Test(arguments: ["hall-a", "node-7", "x", String(repeating: "k", count: 64)], [-59, -127, 20, -1])
    func aNodeBeaconDecodesBackToTheNodesIdentityAndPower(node: String, tx: Int) throws {
        let data = try IBeacon(identity: NodeBeacon.identity(of: node), measuredPower: tx).advertisingData
        #expect(data.count <= 31)
        let report = AdvertisingReport(properties: AdvertisingEventProperties(legacyEventType: 3), legacyEventType: 3, addressTypeByte: 0,
                                       address: BluetoothAddress(rawValue: 0x00_1B_DC_07_31_E4), rssi: -70, data: data[...])
        let event = try #require(HCIEventEncoder.advertisingReport([report]))
        var decoder = AdvertisementDecoder()
        var sightings: [Sighting] = []
        decoder.decode(event: event[...], ts: 1_000, into: &sightings)
        #expect(sightings == [Sighting(ts: 1_000, id: NodeBeacon.identity(of: node), rssi: -70, tx: tx, addr: "00:1b:dc:07:31:e4")])
        let heard = sightings.first?.id ?? ""
        #expect(heard.hasPrefix("ibeacon:\(NodeBeacon.uuid):"))
    }

    @Test(arguments: [
        ("altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:2", "altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:2"),
        ("eddystone:12345678901234678901:000000000001", "ibeacon:<uuid>:<major>:<minor>"),
        ("node:hall-a", "cannot be advertised"),
        ("ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:2", "region"),
        ("ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:2:65536", "65536"),
        ("ibeacon:not-a-uuid:1:2", "not-a-uuid"),
        ("", "''"),
    ])
    func anIdentityThatIsNoIBeaconIsRefused(_ identity: String, _ named: String) {
        let error = #expect(throws: ValueError.self) { try IBeacon(identity: identity, measuredPower: -59) }
        #expect(error?.message.contains(named) == true, "\(error?.message ?? "no error")")
        #expect(error?.message.contains("\n") == false)
    }

    @Test(arguments: [-128, 21, 0, 127, -1000])
    func aPowerOutOfRangeOrZeroIsRefused(_ tx: Int) {
        let error = #expect(throws: ValueError.self) { try IBeacon(identity: NodeBeacon.identity(of: "hall-a"), measuredPower: tx) }
        #expect(error?.message.contains("measured power \(tx) dBm") == true, "\(error?.message ?? "no error")")
        #expect(error?.message.contains("-127 to 20") == true)
    }
}
