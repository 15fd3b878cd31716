import Testing
@testable import PresenceCore

/// HCI event parsing: several reports per event, extended reports and their fragments, events that
/// are not advertising reports, and events cut short.
@Suite struct HCIAdvertisingReportsTests {
    private let iBeaconData = [UInt8](hex: "0201061aff4c0002154142434445464748494041424344454600010002f8") ?? []
    private let uidData = [UInt8](hex: "0201060303aafe1516aafe00de5dc33487f02e477d40580117c5575f6d") ?? []

    private func legacy(_ address: UInt64, type: UInt8 = 0, addressType: UInt8 = 0, rssi: Int8? = -60, data: [UInt8]) -> AdvertisingReport {
        AdvertisingReport(
            properties: AdvertisingEventProperties(legacyEventType: type), legacyEventType: type, addressTypeByte: addressType,
            address: BluetoothAddress(rawValue: address), rssi: rssi, data: data[...])
    }

    private func extended(_ address: UInt64, sid: UInt8 = 1, status: AdvertisingDataStatus = .complete, rssi: Int8? = -70, data: [UInt8]) -> AdvertisingReport {
        AdvertisingReport(
            properties: AdvertisingEventProperties(rawValue: 0x0000).with(status), addressTypeByte: 1,
            address: BluetoothAddress(rawValue: address), rssi: rssi, txPower: 4, advertisingSID: sid,
            primaryPHY: 1, secondaryPHY: 2, data: data[...])
    }

    @Test func severalReportsInOneEvent() throws {
        let reports = [
            legacy(0x0C_F3EE_00F8EC, type: 3, rssi: -69, data: iBeaconData),
            legacy(0xC1_0203_0405_06, type: 0, addressType: 1, rssi: nil, data: uidData),
            legacy(0x00_1122_3344_55, type: 4, rssi: -90, data: []),
        ]
        let event = try #require(HCIEventEncoder.advertisingReport(reports))
        #expect(Array(HCIAdvertisingReports(event: event)) == reports)
        #expect(reports[1].rssi == nil, "RSSI 127 reads as unavailable")
        #expect(reports[2].isScanResponse)
    }

    @Test func theNextReportStartsRightAfterTheRSSI() {
        // xorbit's two iBeacons in one event, laid out report after report.
        let event = [UInt8](hex: "3e4f02020300ecf800eef30c1e0201041aff4c0002158deefbb9f7384297804096668bb4428113880f4ec1bb0300ecf800eef30d1b1aff4c0002158deefbb9f7384297804096668bb4428113880f4fc1b0") ?? []
        let reports = Array(HCIAdvertisingReports(event: event))
        #expect(reports.map(\.address.description) == ["0c:f3:ee:00:f8:ec", "0d:f3:ee:00:f8:ec"])
        #expect(reports.map(\.rssi) == [-69, -80])
        #expect(reports.map { BeaconFrame(advertisingData: $0.data).beaconIdentity } == [
            "ibeacon:8deefbb9-f738-4297-8040-96668bb44281:5000:3918",
            "ibeacon:8deefbb9-f738-4297-8040-96668bb44281:5000:3919",
        ])
    }

    @Test func extendedReportsRoundTrip() throws {
        let reports = [
            extended(0xD1_0203_0405_06, data: uidData),
            extended(0x41_0203_0405_06, sid: 2, rssi: nil, data: iBeaconData),
        ]
        let event = try #require(HCIEventEncoder.extendedAdvertisingReport(reports))
        #expect(event[2] == 0x0D)
        let parsed = Array(HCIAdvertisingReports(event: event))
        #expect(parsed == reports)
        #expect(parsed[0].txPower == 4 && parsed[0].advertisingSID == 1 && parsed[0].secondaryPHY == 2)
        #expect(parsed[0].addressType == .randomStatic && parsed[1].addressType == .resolvablePrivate)
        #expect(parsed[0].legacyEventType == nil)
    }

    @Test func extendedEventTypeIsABitSet() throws {
        // 0x13: a legacy ADV_IND seen through an extended scan; 0x2A: scannable scan response, truncated.
        var report = extended(0xC0_0000_0000_01, data: [])
        report.properties = AdvertisingEventProperties(rawValue: 0x13)
        let parsed = try #require(Array(HCIAdvertisingReports(event: HCIEventEncoder.extendedAdvertisingReport([report]) ?? [])).first)
        #expect(parsed.properties == [.legacy, .connectable, .scannable])
        #expect(parsed.dataStatus == .complete)
        #expect(AdvertisingEventProperties(rawValue: 0x2A).dataStatus == .incomplete)
        #expect(AdvertisingEventProperties(rawValue: 0x4A).dataStatus == .truncated)
        #expect(AdvertisingEventProperties(rawValue: 0x4A).contains(.scanResponse))
    }

    @Test func fragmentsReassembleByAddressAndSet() throws {
        let whole = Array(0 ..< 200).map { UInt8($0) }
        var reassembler = ExtendedAdvertisingReassembler()
        // Two advertisers interleave their chains; a third sends a complete report in between.
        #expect(reassembler.add(extended(0xA, sid: 1, status: .incomplete, data: Array(whole[0 ..< 80]))) == nil)
        #expect(reassembler.add(extended(0xB, sid: 1, status: .incomplete, data: [9, 9])) == nil)
        let other = extended(0xC, data: [1, 2, 3])
        #expect(reassembler.add(other) == other)
        #expect(reassembler.add(extended(0xA, sid: 1, status: .incomplete, data: Array(whole[80 ..< 160]))) == nil)
        let last = reassembler.add(extended(0xA, sid: 1, status: .complete, rssi: -55, data: Array(whole[160...])))
        let done = try #require(last)
        #expect(Array(done.data) == whole)
        #expect(done.rssi == -55 && done.dataStatus == .complete)
        // The same address in another set is another chain.
        #expect(reassembler.add(extended(0xB, sid: 2, data: [7])).map { Array($0.data) } == [7])
        let cut = reassembler.add(extended(0xB, sid: 1, status: .truncated, data: [8]))
        let truncated = try #require(cut)
        #expect(Array(truncated.data) == [9, 9, 8] && truncated.dataStatus == .truncated)
        #expect(reassembler.pendingCount == 0 && reassembler.discarded == 0)
    }

    @Test func reassemblyIsBounded() {
        var reassembler = ExtendedAdvertisingReassembler(maximumPending: 2, maximumLength: 10)
        _ = reassembler.add(extended(1, status: .incomplete, data: [1]))
        _ = reassembler.add(extended(2, status: .incomplete, data: [2]))
        _ = reassembler.add(extended(3, status: .incomplete, data: [3]))
        #expect(reassembler.pendingCount == 2 && reassembler.discarded == 1)
        #expect(reassembler.add(extended(1, data: [4])).map { Array($0.data) } == [4], "the oldest chain was evicted")
        _ = reassembler.add(extended(2, status: .incomplete, data: Array(repeating: 0, count: 10)))
        #expect(reassembler.discarded == 2, "a chain longer than the limit is dropped")
        #expect(reassembler.add(extended(2, data: [5])).map { Array($0.data) } == [5])
    }

    @Test func nonAdvertisingEventsYieldNothing() {
        let events: [[UInt8]] = [
            [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00],             // Command Complete, LE Set Scan Enable
            [0x0F, 0x04, 0x00, 0x01, 0x41, 0x20],             // Command Status, LE Set Extended Scan Parameters
            [0x3E, 0x0C, 0x01, 0x00, 0x40, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x00], // LE Connection Complete
            [0x3E, 0x13, 0x0B, 0x01] + Array(repeating: 0, count: 16), // LE Directed Advertising Report
            [0x05, 0x04, 0x00, 0x40, 0x00, 0x13],             // Disconnection Complete
            [0x3E], [0x3E, 0x02], [0x3E, 0x02, 0x02], [],
        ]
        for event in events {
            #expect(Array(HCIAdvertisingReports(event: event)).isEmpty, "\(event.hex)")
        }
    }

    @Test func truncatedEventsKeepTheReportsThatFit() throws {
        let reports = [legacy(1, data: iBeaconData), legacy(2, data: uidData)]
        let event = try #require(HCIEventEncoder.advertisingReport(reports))
        let firstEnd = 4 + 10 + iBeaconData.count
        for cut in 0 ..< event.count {
            var parser = HCIAdvertisingReports(event: event[..<cut])
            let parsed = Array(IteratorSequence(parser))
            while parser.next() != nil {}
            let expected = cut >= firstEnd ? 1 : 0
            #expect(parsed.count == expected, "cut at \(cut)")
            #expect(parser.isTruncated == (cut >= 4), "cut at \(cut)")
            #expect(parsed.first.map { $0 == reports[0] } ?? true)
        }
        #expect(Array(HCIAdvertisingReports(event: event)).count == 2)
    }

    @Test func aDeclaredLengthShorterThanTheBytesBoundsTheWalk() throws {
        var event = try #require(HCIEventEncoder.advertisingReport([legacy(1, data: iBeaconData), legacy(2, data: uidData)]))
        event[1] = UInt8(2 + 10 + iBeaconData.count)
        #expect(Array(HCIAdvertisingReports(event: event)).count == 1)
        // A count larger than the reports present reads what is there and stops.
        event[1] = UInt8(event.count - 2)
        event[3] = 9
        var parser = HCIAdvertisingReports(event: event)
        #expect(parser.next() != nil && parser.next() != nil && parser.next() == nil)
        #expect(parser.isTruncated)
    }

    @Test func extendedReportsWithLengthsPastTheEndStop() throws {
        var event = try #require(HCIEventEncoder.extendedAdvertisingReport([extended(1, data: uidData)]))
        event[4 + 23] = 200
        #expect(Array(HCIAdvertisingReports(event: event)).isEmpty)
    }
}
