import Testing
@testable import PresenceCore

/// Canonical identities and 1 m tx exactly as the contract spells them.
@Suite struct FrameIdentityTests {
    private let address = BluetoothAddress(rawValue: 0xC47C_8D6A_2B01)

    private func frame(_ hex: String) -> BeaconFrame {
        BeaconFrame(advertisingData: [UInt8](hex: hex) ?? [])
    }

    @Test func iBeaconIdentityAndTxAsInTheFrame() {
        // The contract's own example, with measured power -59 (0xC5).
        let frame = frame("0201061aff4c000215f7826da64fa24e988024bc5b71e0893e00020003c5")
        #expect(frame.beaconIdentity == "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:2:3")
        #expect(frame.identity(address: address) == "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:2:3")
        #expect(frame.txPowerAt1m == -59)
    }

    @Test func decimalsHaveNoLeadingZerosAndReachTheirMaximum() {
        let zero = BeaconFrame.iBeacon(IBeacon(uuid: 0, major: 0, minor: 65535, measuredPower: -59))
        #expect(zero.beaconIdentity == "ibeacon:00000000-0000-0000-0000-000000000000:0:65535")
        let tens = BeaconFrame.altBeacon(AltBeacon(manufacturer: 0x118, id1: UInt128.max, id2: 10, id3: 100, referenceRSSI: -59, reserved: nil))
        #expect(tens.beaconIdentity == "altbeacon:ffffffff-ffff-ffff-ffff-ffffffffffff:10:100")
    }

    @Test func altBeaconIdentitySplitsItsIDSixteenTwoTwo() {
        let frame = frame("02011a1bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c50900")
        #expect(frame.identity(address: address) == "altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:2")
        #expect(frame.txPowerAt1m == -59)
    }

    @Test func eddystoneUIDIdentityAndTxLessFortyOneDecibels() {
        // The frame says -29 dBm at 0 m; at 1 m that is -70.
        let frame = frame("0201060303aafe1716aafe00e3123456789012346789010000000000010000")
        #expect(frame.beaconIdentity == "eddystone:12345678901234678901:000000000001")
        #expect(frame.txPowerAt1m == -29 - 41)
        let contract = BeaconFrame.eddystoneUID(EddystoneUID(txPowerAt0m: -20, namespace: 0xEDD1_EBEA_C04E_5DEF_A017, instance: 0x0123_4567_89AB))
        #expect(contract.beaconIdentity == "eddystone:edd1ebeac04e5defa017:0123456789ab")
        #expect(contract.txPowerAt1m == -61)
    }

    @Test func otherEddystoneFramesAndStrangersAreNamedByAddress() {
        let url = frame("0303aafe1316aafe10f8036769746875620063697472757a")
        #expect(url.beaconIdentity == nil)
        #expect(url.identity(address: address) == "mac:c4:7c:8d:6a:2b:01")
        #expect(url.txPowerAt1m == -8 - 41)
        let eid = frame("0201060303aafe0d16aafe30e34549445f74657374")
        #expect(eid.identity(address: address) == "mac:c4:7c:8d:6a:2b:01")
        #expect(eid.txPowerAt1m == -29 - 41)
        let tlm = frame("0201060303aafe1116aafe20000b1813000000146700002ac4e4")
        #expect(tlm.identity(address: address) == "mac:c4:7c:8d:6a:2b:01")
        #expect(tlm.txPowerAt1m == nil)
        #expect(BeaconFrame.other.identity(address: BluetoothAddress(rawValue: 0x0A0B_0C0D_0E0F)) == "mac:0a:0b:0c:0d:0e:0f")
    }

    @Test func identitiesParseBackToThemselves() throws {
        for hex in [
            "0201061aff4c0002154142434445464748494041424344454600010002f8",
            "02011a1bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c50900",
            "0201060303aafe1516aafe00e700010203040506070809010203040506",
        ] {
            let text = try #require(frame(hex).beaconIdentity)
            #expect(try Identity(parsing: text).text == text)
        }
        let mac = BeaconFrame.other.identity(address: address)
        #expect(try Identity(parsing: mac).text == mac)
    }

    @Test func implausiblePowersAreNotPublished() {
        // 0 at 1 m means "not calibrated"; +100 is no radio's figure at 1 m.
        #expect(BeaconFrame.iBeacon(IBeacon(uuid: 1, major: 1, minor: 1, measuredPower: 0)).txPowerAt1m == nil)
        #expect(BeaconFrame.iBeacon(IBeacon(uuid: 1, major: 1, minor: 1, measuredPower: 100)).txPowerAt1m == nil)
        #expect(BeaconFrame.altBeacon(AltBeacon(manufacturer: 0, id1: 1, id2: 1, id3: 1, referenceRSSI: 0, reserved: 0)).txPowerAt1m == nil)
        // Eddystone 0 dBm at 0 m is a real figure: -41 at 1 m. -100 at 0 m would be -141: out of range.
        #expect(BeaconFrame.eddystoneUID(EddystoneUID(txPowerAt0m: 0, namespace: 1, instance: 1)).txPowerAt1m == -41)
        #expect(BeaconFrame.eddystoneUID(EddystoneUID(txPowerAt0m: -100, namespace: 1, instance: 1)).txPowerAt1m == nil)
    }

    @Test func addressesPrintAndParseInDisplayOrder() {
        #expect(address.description == "c4:7c:8d:6a:2b:01")
        #expect(BluetoothAddress("C4:7C:8D:6A:2B:01") == address)
        #expect(BluetoothAddress("c4:7c:8d:6a:2b") == nil)
        #expect(BluetoothAddress("c4:7c:8d:6a:2b:0g") == nil)
        #expect(address.hciBytes == [0x01, 0x2B, 0x6A, 0x8D, 0x7C, 0xC4])
    }

    @Test(arguments: [
        (UInt8(0x00), UInt64(0x1234_5678_9ABC), AddressType.public),
        (0x01, 0xC000_0000_0001, .randomStatic),
        (0x01, 0xFFFF_FFFF_FFFF, .randomStatic),
        (0x01, 0x4000_0000_0001, .resolvablePrivate),
        (0x01, 0x7FFF_FFFF_FFFF, .resolvablePrivate),
        (0x01, 0x0000_0000_0001, .nonResolvablePrivate),
        (0x01, 0x3FFF_FFFF_FFFF, .nonResolvablePrivate),
        (0x01, 0x8000_0000_0001, .reservedRandom),
        (0x02, 0x1234_5678_9ABC, .resolvedPublic),
        (0x03, 0xD234_5678_9ABC, .resolvedRandomStatic),
        (0xFF, 0, .anonymous),
        (0x07, 0, .unknown(0x07)),
    ])
    func addressTypes(_ byte: UInt8, _ raw: UInt64, _ expected: AddressType) {
        let type = AddressType(typeByte: byte, address: BluetoothAddress(rawValue: raw))
        #expect(type == expected)
        #expect(type.isStable == [.public, .randomStatic, .resolvedPublic, .resolvedRandomStatic].contains(expected))
        #expect(type.isRotating == [.resolvablePrivate, .nonResolvablePrivate].contains(expected))
    }

    @Test func urlSchemesAndExpansions() {
        let cases: [(UInt8, [UInt8], String)] = [
            (0, Array("goo".utf8) + [0x07], "http://www.goo.com"),
            (1, Array("a".utf8) + [0x01] + Array("x".utf8), "https://www.a.org/x"),
            (2, Array("b".utf8) + [0x04, 0x0B], "http://b.info/.info"),
            (3, [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D],
             "https://.com/.org/.edu/.net/.info/.biz/.gov/.com.org.edu.net.info.biz.gov"),
        ]
        for (scheme, encoded, url) in cases {
            #expect(EddystoneURL(txPowerAt0m: -20, scheme: scheme, encoded: ShortBytes(encoded))?.url == url)
        }
        // Unknown scheme, reserved bytes, nothing or too much to expand: not a URL frame.
        #expect(EddystoneURL(txPowerAt0m: -20, scheme: 4, encoded: ShortBytes([0x61])) == nil)
        #expect(EddystoneURL(txPowerAt0m: -20, scheme: 0, encoded: ShortBytes([0x61, 0x20])) == nil)
        #expect(EddystoneURL(txPowerAt0m: -20, scheme: 0, encoded: ShortBytes([0x61, 0x80])) == nil)
        #expect(EddystoneURL(txPowerAt0m: -20, scheme: 0, encoded: ShortBytes([])) == nil)
        #expect(EddystoneURL(txPowerAt0m: -20, scheme: 0, encoded: ShortBytes([UInt8](repeating: 0x61, count: 18))) == nil)
    }

    @Test func telemetryBecomesTheWireTelemetry() {
        let tlm = EddystoneTLM(batteryMillivolts: 2840, temperatureRaw: 0x1380, advertisingCount: 5223, uptimeDeciseconds: 10948)
        #expect(tlm.telemetry == Telemetry(batteryMillivolts: 2840, temperature: 19.5, advertisementCount: 5223, uptime: 1094.8))
        let negative = EddystoneTLM(batteryMillivolts: 0, temperatureRaw: -0x0280, advertisingCount: 0, uptimeDeciseconds: 0)
        #expect(negative.temperature == -2.5)
        #expect(negative.telemetry.batteryMillivolts == nil)
        let unknown = EddystoneTLM(batteryMillivolts: 3000, temperatureRaw: Int16(bitPattern: 0x8000), advertisingCount: 1, uptimeDeciseconds: 1)
        #expect(unknown.temperature == nil)
        #expect(EddystoneEncryptedTLM(encryptedData: ShortBytes([1, 2]), salt: nil, mic: nil).telemetry == Telemetry(encrypted: true))
    }

    @Test func aWholeEncryptedTLMHasItsSaltAndMICBigEndian() {
        let frame = frame("0201060303aafe1516aafe2001" + String(repeating: "41", count: 12) + "deadbeef")
        #expect(frame == .eddystoneEncryptedTLM(EddystoneEncryptedTLM(encryptedData: ShortBytes([UInt8](repeating: 0x41, count: 12)), salt: 0xDEAD, mic: 0xBEEF)))
        #expect(frame.identity(address: address) == "mac:c4:7c:8d:6a:2b:01")
    }

    @Test func adStructuresStopAtPaddingAndAtTruncation() {
        var padded = ADStructures([0x02, 0x01, 0x06, 0x00, 0x03, 0x03, 0xAA, 0xFE])
        #expect(padded.next()?.type == 0x01)
        #expect(padded.next() == nil)
        #expect(!padded.isTruncated)
        var cut = ADStructures([0x02, 0x01, 0x06, 0x05, 0xFF, 0x4C])
        #expect(cut.next()?.data == [0x06])
        #expect(cut.next() == nil)
        #expect(cut.isTruncated)
        #expect(Array(ADStructures([0x01, 0x09])).map(\.data.count) == [0])
    }
}
