import Testing
@testable import PresenceCore

/// btsnoop: writer → reader round trips for the three datalinks, and captures cut short.
@Suite struct BTSnoopTests {
    private let advertising = HCIEventEncoder.advertisingReport([
        AdvertisingReport(
            properties: AdvertisingEventProperties(legacyEventType: 3), legacyEventType: 3, addressTypeByte: 0,
            address: BluetoothAddress(rawValue: 0x0C_F3EE_00F8EC), rssi: -69,
            data: ([UInt8](hex: "0201061aff4c0002154142434445464748494041424344454600010002f8") ?? [])[...]),
    ]) ?? []
    private let commandComplete: [UInt8] = [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00]
    private let setScanEnable: [UInt8] = [0x0C, 0x20, 0x02, 0x01, 0x00]
    private let start: Int64 = 1_763_774_734_050_123

    private func capture(_ datalink: BTSnoopDatalink) -> [UInt8] {
        var writer = BTSnoopWriter(datalink: datalink)
        if datalink == .monitor {
            writer.appendMonitor(opcode: BTSnoop.MonitorOpcode.newIndex, controllerIndex: 0, data: [0, 0] + [UInt8](repeating: 0, count: 6) + Array("hci0\0\0\0\0".utf8), unixMicroseconds: start - 10)
            writer.appendMonitor(opcode: BTSnoop.MonitorOpcode.systemNote, controllerIndex: 0xFFFF, data: Array("note\0".utf8), unixMicroseconds: start - 5)
        }
        writer.appendCommand(setScanEnable, unixMicroseconds: start)
        writer.appendEvent(commandComplete, unixMicroseconds: start + 1)
        writer.appendEvent(advertising, unixMicroseconds: start + 2)
        writer.appendRecord([0x02, 0x00, 0x20, 0x00], flags: datalink == .monitor ? UInt32(BTSnoop.MonitorOpcode.aclRX) : 1, unixMicroseconds: start + 3)
        writer.appendEvent(advertising, unixMicroseconds: start + 4, controllerIndex: 1)
        return writer.bytes
    }

    @Test(arguments: [BTSnoopDatalink.h1, .h4, .monitor])
    func roundTrip(_ datalink: BTSnoopDatalink) throws {
        let bytes = capture(datalink)
        #expect(bytes.starts(with: Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, UInt8(datalink.rawValue >> 8), UInt8(datalink.rawValue & 0xFF)]))
        var reader = try BTSnoopReader(bytes)
        #expect(reader.datalink == datalink)
        var events: [BTSnoopHCIEvent] = []
        while let event = reader.nextHCIEvent() { events.append(event) }
        #expect(reader.truncation == nil)
        #expect(events.map { Array($0.packet) } == [commandComplete, advertising, advertising])
        #expect(events.map(\.unixMicroseconds) == [start + 1, start + 2, start + 4])
        #expect(events.map(\.controllerIndex) == (datalink == .monitor ? [0, 0, 1] : [0, 0, 0]))
        let reports = events.flatMap { Array(HCIAdvertisingReports(event: $0.packet)) }
        #expect(reports.map(\.rssi) == [-69, -69])
    }

    @Test func recordsKeepTheirHeaderFields() throws {
        var writer = BTSnoopWriter(datalink: .h4)
        writer.appendRecord([0x04, 0x0E, 0x00], flags: 3, unixMicroseconds: 0, originalLength: 9, cumulativeDrops: 7)
        var reader = try BTSnoopReader(writer.bytes)
        let next = reader.next()
        let record = try #require(next)
        #expect(record.originalLength == 9 && record.data.count == 3 && record.flags == 3 && record.cumulativeDrops == 7)
        // The Unix epoch is 0x00DCDDB30F2F8000 µs after btsnoop's year 0.
        #expect(record.timestamp == 0x00DC_DDB3_0F2F_8000)
        #expect(record.unixMicroseconds == 0)
        #expect(Array(writer.bytes[16 ..< 32]) == [0, 0, 0, 9, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 7])
        #expect(Array(writer.bytes[32 ..< 40]) == [0x00, 0xDC, 0xDD, 0xB3, 0x0F, 0x2F, 0x80, 0x00])
    }

    @Test func aTruncatedLastRecordIsReportedNotRead() throws {
        let whole = capture(.monitor)
        var complete = try BTSnoopReader(whole)
        var count = 0
        while complete.next() != nil { count += 1 }
        let lastLength = 24 + advertising.count
        // Cut inside the last record's data, then inside its header.
        for cut in [1, advertising.count, lastLength - 10, lastLength - 1] {
            var reader = try BTSnoopReader(Array(whole.dropLast(cut)))
            var read = 0
            while reader.next() != nil { read += 1 }
            #expect(read == count - 1, "cut \(cut)")
            let truncation = try #require(reader.truncation)
            #expect(truncation.offset == whole.count - lastLength)
            #expect(truncation.available == lastLength - cut)
            #expect(truncation.needed == (lastLength - cut >= 24 ? lastLength : 24))
            #expect(reader.next() == nil)
        }
    }

    @Test func aLengthBeyondTheFileIsATruncation() throws {
        var writer = BTSnoopWriter(datalink: .h1)
        writer.appendEvent(commandComplete, unixMicroseconds: start)
        var bytes = writer.bytes
        bytes[16 + 4 ..< 16 + 8] = [0xFF, 0xFF, 0xFF, 0xFF]
        var reader = try BTSnoopReader(bytes)
        #expect(reader.nextHCIEvent() == nil)
        #expect(reader.truncation?.needed == 24 + 0xFFFF_FFFF)
    }

    @Test func badHeadersAreRefusedWithAReason() {
        #expect(throws: BTSnoopError.self) { try BTSnoopReader(Array("btsnoop".utf8)) }
        #expect(throws: BTSnoopError.self) { try BTSnoopReader(Array("btsnooq\0".utf8) + [0, 0, 0, 1, 0, 0, 3, 0xE9]) }
        #expect(throws: BTSnoopError("btsnoop version 2 is not supported (expected 1)")) {
            try BTSnoopReader(Array("btsnoop\0".utf8) + [0, 0, 0, 2, 0, 0, 3, 0xE9])
        }
        // An unknown datalink reads, but yields no HCI events.
        var writer = BTSnoopWriter(datalink: BTSnoopDatalink(rawValue: 1003))
        writer.appendEvent(commandComplete, unixMicroseconds: 0)
        var reader = try? BTSnoopReader(writer.bytes)
        #expect(reader?.nextHCIEvent() == nil)
    }

    @Test func emptyCaptureReadsNothing() throws {
        var reader = try BTSnoopReader(BTSnoopWriter(datalink: .monitor).bytes)
        #expect(reader.next() == nil && reader.truncation == nil)
    }
}
