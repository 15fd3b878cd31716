import Foundation
import Testing
@testable import PresenceCore

/// The committed capture `Tests/Fixtures/scan.btsnoop`: made by `ScanFixture`, decoded into the
/// sightings `scan.expected.json` lists, and read alike by BlueZ's own `btmon` when it is installed.
@Suite struct ScanFixtureTests {
    private let fixture = TestFiles.fixtures.appendingPathComponent("scan.btsnoop")
    private let expected = TestFiles.fixtures.appendingPathComponent("scan.expected.json")

    private func committed() throws -> [UInt8] {
        try #require(FileManager.default.contents(atPath: fixture.path).map { [UInt8]($0) }, "missing \(fixture.path)")
    }

    @Test func theCommittedCaptureIsWhatTheGeneratorMakes() throws {
        let generated = ScanFixture.capture()
        if ProcessInfo.processInfo.environment["PRESENCE_WRITE_FIXTURES"] == "1" {
            try Data(generated).write(to: fixture)
        }
        #expect(try committed() == generated, "regenerate with PRESENCE_WRITE_FIXTURES=1 (see ScanFixture)")
    }

    @Test func theCaptureDecodesIntoTheExpectedSightings() throws {
        var reader = try BTSnoopReader(committed())
        #expect(reader.datalink == .monitor)
        var decoder = AdvertisementDecoder()
        var sightings: [Sighting] = []
        while let event = reader.nextHCIEvent() {
            decoder.decode(event: event.packet, ts: event.unixMicroseconds / 1000, into: &sightings)
        }
        #expect(reader.truncation == nil)

        let file = try #require(FileManager.default.contents(atPath: expected.path))
        // The expectation is itself a valid SightingBatch, every sighting within the contract.
        let batch = try SightingBatchDecoder.decode([UInt8](file), topicNode: "fixture").get()
        #expect(batch.droppedSightings == 0 && batch.batch.sightings.count == 8)
        let json = try JSONValue.parse(file)
        let list = try #require(json.object?["sightings"]?.array)
        #expect(sightings.count == list.count)
        for (sighting, entry) in zip(sightings, list) {
            let object = entry.object ?? [:]
            #expect(sighting.ts == object["ts"]?.number.map { Int64($0) }, "\(sighting.id)")
            #expect(sighting.id == object["id"]?.string)
            #expect(sighting.rssi == object["rssi"]?.int, "\(sighting.id)")
            #expect(sighting.tx == object["tx"]?.int, "\(sighting.id)")
            #expect(sighting.addr == object["addr"]?.string, "\(sighting.id)")
            let telemetry = object["tlm"]?.object
            #expect(sighting.telemetry?.batteryMillivolts == telemetry?["batt"]?.int, "\(sighting.id)")
            #expect(sighting.telemetry?.temperature == telemetry?["temp"]?.number, "\(sighting.id)")
            #expect(sighting.telemetry?.advertisementCount.map(Int.init) == telemetry?["adv"]?.int, "\(sighting.id)")
            #expect(sighting.telemetry?.uptime == telemetry?["up"]?.number, "\(sighting.id)")
        }
        let statistics = decoder.statistics
        #expect(statistics.reports == 11)
        #expect(statistics.fragmentsHeld == 1 && statistics.telemetryHeld == 1)
        #expect(statistics.drops(.privateAddress) == 1)
        #expect(FrameKind.allCases.map { statistics.frames($0) } == [3, 1, 2, 1, 1, 0, 0, 2])
    }

    /// BlueZ's decoder of the same file: the addresses and RSSI of every advertising report must
    /// agree, in order. (btmon prints iBeacon UUIDs and major/minor little-endian, so it is no
    /// oracle for those.) Skipped where bluez is not installed; scripts/install-deps.sh installs it.
    @Test(.enabled(if: Btmon.path != nil, "btmon (Debian package bluez) is not installed"))
    func btmonReadsTheSameReports() throws {
        let output = try Btmon.decode(fixture)
        #expect(output.contains("LE Extended Advertising Report"), "btmon saw no extended report")
        var theirs: [(String, Int)] = []
        var address: String?
        for line in output.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("Address: ") {
                address = line.split(separator: " ").dropFirst().first.map { $0.lowercased() }
            } else if line.hasPrefix("RSSI: "), let current = address, let rssi = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) {
                theirs.append((current, rssi))
                address = nil
            }
        }
        var reader = try BTSnoopReader(committed())
        var ours: [(String, Int)] = []
        while let event = reader.nextHCIEvent() {
            for report in HCIAdvertisingReports(event: event.packet) {
                ours.append((report.address.description, report.rssi.map(Int.init) ?? 127))
            }
        }
        #expect(ours.count == 11)
        #expect(theirs.map(\.0) == ours.map(\.0))
        #expect(theirs.map(\.1) == ours.map(\.1))
    }
}

/// Runs BlueZ's `btmon -r` on a capture.
enum Btmon {
    static let path: String? = ["/usr/bin/btmon", "/usr/sbin/btmon", "/bin/btmon"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static func decode(_ capture: URL) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(path))
        process.arguments = ["-r", capture.path, "--no-pager"]
        process.environment = ["TERM": "dumb", "COLUMNS": "200"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
