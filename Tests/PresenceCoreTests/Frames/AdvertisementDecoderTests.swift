import Testing
@testable import PresenceCore

/// The decoder's policies: who becomes a sighting, under which name, with which telemetry.
@Suite struct AdvertisementDecoderTests {
    private static let iBeacon = [UInt8](hex: "0201061aff4c000215f7826da64fa24e988024bc5b71e0893e00020003c5") ?? []
    private static let uid = [UInt8](hex: "0201060303aafe1516aafe00de5dc33487f02e477d40580117c5575f6d") ?? []
    private static let tlm = [UInt8](hex: "0201060303aafe1116aafe20000c3c200000000fbc000049ba") ?? []
    private static let etlm = [UInt8](hex: "0201060303aafe1516aafe2001414141414141414141414141deadbeef") ?? []
    private static let url = [UInt8](hex: "0303aafe1316aafe10f8036769746875620063697472757a") ?? []
    private static let name = [UInt8](hex: "0909566976696b2d3031") ?? []
    private static let iBeaconID = "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:2:3"
    private static let uidID = "eddystone:5dc33487f02e477d4058:0117c5575f6d"

    private let publicAddress: UInt64 = 0x00_1B_DC_07_31_E4
    private let staticAddress: UInt64 = 0xD4_11_22_33_44_55
    private let resolvable: UInt64 = 0x5A_11_22_33_44_55
    private let nonResolvable: UInt64 = 0x1A_11_22_33_44_55

    private func report(_ data: [UInt8], _ address: UInt64, addressType: UInt8 = 1, rssi: Int8? = -60, type: UInt8 = 0) -> AdvertisingReport {
        AdvertisingReport(
            properties: AdvertisingEventProperties(legacyEventType: type), legacyEventType: type, addressTypeByte: addressType,
            address: BluetoothAddress(rawValue: address), rssi: rssi, data: data[...])
    }

    @Test func beaconFramesMakeSightingsWithTheContractsFields() {
        var decoder = AdvertisementDecoder()
        let sighting = decoder.decode(report(Self.iBeacon, resolvable, rssi: -67), ts: 1_763_774_734_050)
        #expect(sighting == Sighting(ts: 1_763_774_734_050, id: Self.iBeaconID, rssi: -67, tx: -59, addr: "5a:11:22:33:44:55"))
        let uid = decoder.decode(report(Self.uid, nonResolvable), ts: 1)
        #expect(uid?.id == Self.uidID && uid?.tx == -34 - 41)
    }

    @Test func rotatingPrivateAddressesAreDroppedByDefault() {
        var decoder = AdvertisementDecoder()
        #expect(decoder.decode(report(Self.name, resolvable), ts: 1) == nil)
        #expect(decoder.decode(report(Self.url, nonResolvable), ts: 2) == nil)
        #expect(decoder.decode(report(Self.name, 0, addressType: 0xFF), ts: 3) == nil)
        #expect(decoder.decode(report(Self.name, 0x8A_11_22_33_44_55), ts: 4) == nil)
        #expect(decoder.statistics.drops(.privateAddress) == 2)
        #expect(decoder.statistics.drops(.anonymousAddress) == 1)
        #expect(decoder.statistics.drops(.unusableAddress) == 1)
        // Stable addresses are published by address.
        #expect(decoder.decode(report(Self.name, publicAddress, addressType: 0), ts: 5)?.id == "mac:00:1b:dc:07:31:e4")
        #expect(decoder.decode(report(Self.url, staticAddress), ts: 6)?.id == "mac:d4:11:22:33:44:55")
        #expect(decoder.decode(report(Self.name, resolvable, addressType: 0x03), ts: 7)?.id == "mac:5a:11:22:33:44:55")
        #expect(decoder.statistics.sightings == 3)
    }

    @Test func anAnonymousBeaconIsPublishedWithoutAnAddress() {
        var decoder = AdvertisementDecoder()
        let sighting = decoder.decode(report(Self.iBeacon, 0, addressType: 0xFF), ts: 1)
        #expect(sighting?.id == Self.iBeaconID && sighting?.addr == nil)
    }

    @Test func addressPolicyAllAndNone() {
        var all = AdvertisementDecoder(options: .init(addresses: .all))
        #expect(all.decode(report(Self.name, resolvable), ts: 1)?.id == "mac:5a:11:22:33:44:55")
        #expect(all.decode(report(Self.name, 0, addressType: 0xFF), ts: 1) == nil)
        var none = AdvertisementDecoder(options: .init(addresses: .none))
        #expect(none.decode(report(Self.name, publicAddress, addressType: 0), ts: 1) == nil)
        #expect(none.decode(report(Self.iBeacon, publicAddress, addressType: 0), ts: 1)?.id == Self.iBeaconID)
        #expect(none.statistics.drops(.addressesOff) == 1)
    }

    @Test func hashingIsStableForAKeyAndDiffersAcrossKeys() throws {
        func decode(_ secret: String, _ address: UInt64) -> Sighting? {
            var decoder = AdvertisementDecoder(options: .init(hashing: AddressHasher(secret: secret)))
            return decoder.decode(report(Self.name, address), ts: 1)
        }
        let first = try #require(decode("secret-a", staticAddress))
        #expect(first == decode("secret-a", staticAddress))
        #expect(first.id != decode("secret-b", staticAddress)?.id)
        #expect(first.id != decode("secret-a", staticAddress + 1)?.id)
        #expect(first.id != "mac:d4:11:22:33:44:55")
        #expect(first.id == "mac:" + (first.addr ?? ""), "addr is the pseudonym too")
        #expect(try Identity(parsing: first.id).kind == .mac)
        // A beacon keeps its beacon identity; only its address is replaced.
        var decoder = AdvertisementDecoder(options: .init(hashing: AddressHasher(secret: "secret-a")))
        let beacon = decoder.decode(report(Self.iBeacon, staticAddress), ts: 1)
        #expect(beacon?.id == Self.iBeaconID && beacon?.addr == first.addr)
    }

    @Test func allowAndDenyByIdentityPrefix() {
        let other = [UInt8](hex: "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010001c5") ?? []
        var allow = AdvertisementDecoder(options: .init(allow: ["IBEACON:F7826DA6-"]))
        #expect(allow.decode(report(Self.iBeacon, staticAddress), ts: 1)?.id == Self.iBeaconID)
        #expect(allow.decode(report(other, staticAddress), ts: 1) == nil)
        #expect(allow.decode(report(Self.name, publicAddress, addressType: 0), ts: 1) == nil)
        #expect(allow.statistics.drops(.notAllowed) == 2)
        var deny = AdvertisementDecoder(options: .init(allow: ["ibeacon:"], deny: ["ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:2"]))
        #expect(deny.decode(report(Self.iBeacon, staticAddress), ts: 1) == nil)
        #expect(deny.decode(report(other, staticAddress), ts: 1)?.id == "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1")
        #expect(deny.statistics.drops(.denied) == 1)
        // The verdict is cached per identity, and holds on every report.
        #expect(deny.decode(report(Self.iBeacon, publicAddress, addressType: 0), ts: 2) == nil)
        #expect(deny.statistics.drops(.denied) == 2)
    }

    @Test func minimumAndMissingRSSI() {
        var decoder = AdvertisementDecoder(options: .init(minimumRSSI: -80))
        #expect(decoder.decode(report(Self.iBeacon, staticAddress, rssi: -80), ts: 1) != nil)
        #expect(decoder.decode(report(Self.iBeacon, staticAddress, rssi: -81), ts: 1) == nil)
        #expect(decoder.decode(report(Self.iBeacon, staticAddress, rssi: nil), ts: 1) == nil)
        #expect(decoder.decode(report(Self.iBeacon, staticAddress, rssi: 21), ts: 1) == nil)
        #expect(decoder.statistics.drops(.belowMinimumRSSI) == 1)
        #expect(decoder.statistics.drops(.rssiUnavailable) == 1)
        #expect(decoder.statistics.drops(.rssiOutOfRange) == 1)
    }

    @Test func telemetryRidesOnTheNextUIDSightingOfTheSameAddress() {
        var decoder = AdvertisementDecoder()
        let first = decoder.decode(report(Self.uid, staticAddress), ts: 1000)
        #expect(first?.telemetry == nil)
        // The beacon interleaves: its TLM is held, not published by itself.
        #expect(decoder.decode(report(Self.tlm, staticAddress), ts: 1100) == nil)
        #expect(decoder.statistics.telemetryHeld == 1)
        // Another beacon's UID does not take it.
        var otherUID = Self.uid
        otherUID[otherUID.count - 1] ^= 0xFF
        #expect(decoder.decode(report(otherUID, staticAddress + 1), ts: 1150)?.telemetry == nil)
        let next = decoder.decode(report(Self.uid, staticAddress), ts: 1200)
        #expect(next?.id == Self.uidID)
        #expect(next?.telemetry == Telemetry(batteryMillivolts: 3132, temperature: 32, advertisementCount: 4028, uptime: 1887.4))
        // Once.
        #expect(decoder.decode(report(Self.uid, staticAddress), ts: 1300)?.telemetry == nil)
        #expect(decoder.statistics.telemetryAttached == 1)
        #expect(decoder.statistics.frames(.eddystoneTLM) == 1 && decoder.statistics.frames(.eddystoneUID) == 4)
    }

    @Test func telemetryHeardFirstWaitsForTheBeaconEvenFromARotatingAddress() {
        var decoder = AdvertisementDecoder()
        // From a private address the TLM alone is no sighting, but it is kept for the UID.
        #expect(decoder.decode(report(Self.etlm, resolvable), ts: 1000) == nil)
        let uid = decoder.decode(report(Self.uid, resolvable), ts: 1500)
        #expect(uid?.telemetry == Telemetry(encrypted: true))
    }

    @Test func telemetryTooOldIsNotAttached() {
        var decoder = AdvertisementDecoder(options: .init(telemetryMaxAge: 10_000))
        _ = decoder.decode(report(Self.uid, staticAddress), ts: 0)
        _ = decoder.decode(report(Self.tlm, staticAddress), ts: 1_000)
        #expect(decoder.decode(report(Self.uid, staticAddress), ts: 11_001)?.telemetry == nil)
    }

    @Test func aTelemetryOnlyAdvertiserIsNamedByAddress() {
        var decoder = AdvertisementDecoder()
        let sighting = decoder.decode(report(Self.tlm, publicAddress, addressType: 0), ts: 1)
        #expect(sighting?.id == "mac:00:1b:dc:07:31:e4")
        #expect(sighting?.telemetry?.batteryMillivolts == 3132)
        #expect(sighting?.tx == nil)
    }

    @Test func aTLMBesideAnIBeaconInOneAdvertisementIsAttachedAtOnce() {
        // BlueCharm beacons put Eddystone TLM service data next to their iBeacon.
        let both = Self.iBeacon + ([UInt8](hex: "1116aafe20000bfe1c000000070800003e7c") ?? [])
        var decoder = AdvertisementDecoder()
        let sighting = decoder.decode(report(both, staticAddress), ts: 1)
        #expect(sighting?.id == Self.iBeaconID)
        #expect(sighting?.telemetry?.batteryMillivolts == 3070)
        #expect(sighting?.telemetry?.temperature == 28)
    }

    @Test func scanResponsesWithoutABeaconFrameAreDroppedByDefault() {
        var decoder = AdvertisementDecoder()
        #expect(decoder.decode(report(Self.name, publicAddress, addressType: 0, type: 4), ts: 1) == nil)
        #expect(decoder.statistics.drops(.scanResponse) == 1)
        #expect(decoder.decode(report(Self.iBeacon, publicAddress, addressType: 0, type: 4), ts: 1)?.id == Self.iBeaconID)
        var including = AdvertisementDecoder(options: .init(includeScanResponses: true))
        #expect(including.decode(report(Self.name, publicAddress, addressType: 0, type: 4), ts: 1) != nil)
    }

    @Test func malformedBeaconFramesAreOtherAdvertisers() {
        // An iBeacon structure cut short by its own length: a stranger, named by its stable address.
        var decoder = AdvertisementDecoder()
        let cut = [UInt8](hex: "0201061aff4c0002154142434445464748494041424344454600") ?? []
        #expect(decoder.decode(report(cut, publicAddress, addressType: 0), ts: 1)?.id == "mac:00:1b:dc:07:31:e4")
        #expect(decoder.statistics.frames(.other) == 1)
    }

    @Test func theAddressFollowsABeaconThatChangesIt() {
        var decoder = AdvertisementDecoder()
        #expect(decoder.decode(report(Self.iBeacon, resolvable), ts: 1)?.addr == "5a:11:22:33:44:55")
        #expect(decoder.decode(report(Self.iBeacon, resolvable + 1), ts: 2)?.addr == "5a:11:22:33:44:56")
    }

    @Test func identitiesStayRightWhenTheCacheEvicts() {
        var decoder = AdvertisementDecoder(options: .init(cacheCapacity: 8))
        for round in 0 ..< 3 {
            for index in 0 ..< 50 {
                let address = staticAddress + UInt64(index)
                #expect(decoder.decode(report(Self.name, address), ts: Int64(round))?.id == "mac:\(BluetoothAddress(rawValue: address))")
            }
        }
    }

    @Test func extendedFragmentsBecomeOneSighting() throws {
        var decoder = AdvertisementDecoder()
        func fragment(_ bytes: ArraySlice<UInt8>, _ status: AdvertisingDataStatus) -> AdvertisingReport {
            AdvertisingReport(
                properties: AdvertisingEventProperties(rawValue: 0).with(status), addressTypeByte: 1,
                address: BluetoothAddress(rawValue: staticAddress), rssi: -50, advertisingSID: 3, data: bytes)
        }
        let long = Self.name + Self.uid
        #expect(decoder.decode(fragment(long[..<8], .incomplete), ts: 1) == nil)
        let sighting = decoder.decode(fragment(long[8...], .complete), ts: 2)
        #expect(sighting?.id == Self.uidID && sighting?.rssi == -50)
        #expect(decoder.statistics.fragmentsHeld == 1 && decoder.statistics.reports == 2)
    }

    @Test func wholeEventsDecodeIntoTheList() throws {
        let event = try #require(HCIEventEncoder.advertisingReport([
            report(Self.iBeacon, staticAddress), report(Self.name, resolvable), report(Self.uid, publicAddress, addressType: 0),
        ]))
        var decoder = AdvertisementDecoder()
        var sightings: [Sighting] = []
        decoder.decode(event: event[...], ts: 5, into: &sightings)
        #expect(sightings.map(\.id) == [Self.iBeaconID, Self.uidID])
        #expect(decoder.statistics.reports == 3 && decoder.statistics.dropped == 1)
        #expect(FrameKind.allCases.map { decoder.statistics.frames($0) } == [1, 0, 1, 0, 0, 0, 0, 1])
    }
}
