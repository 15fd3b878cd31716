import Testing
@testable import PresenceCore

@Suite struct ScannerCoreTests {
    static let start: Int64 = 1_763_774_734_000
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"

    /// An LE advertising report event holding one iBeacon advert (major 7, `minor`) at -60 dBm.
    static func iBeaconEvent(minor: UInt16) -> ArraySlice<UInt8> {
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15,
                             0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
                             0x00, 0x07, UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5]
        let report = AdvertisingReport(properties: AdvertisingEventProperties(legacyEventType: 3), legacyEventType: 3, addressTypeByte: 0,
                                       address: BluetoothAddress(rawValue: 0x001B_DC07_3100), rssi: -60, data: data[...])
        return (HCIEventEncoder.advertisingReport([report]) ?? [])[...]
    }

    static func core(_ nodes: [String], _ form: ReportForm, batchSize: Int = 1_000) -> ScannerCore {
        ScannerCore(nodes: nodes, form: form, batchInterval: 500, batchSize: batchSize, statsInterval: 5_000, started: start)
    }

    /// What `node` heard: one iBeacon advert (major 7, `minor`) at `ts`.
    static func heard(_ minor: Int, by node: String, at ts: Int64) -> VenueSimulator.Heard {
        VenueSimulator.Heard(node: node, sighting: Sighting(ts: ts, id: "ibeacon:\(uuid):7:\(minor)", rssi: -70, tx: -59))
    }

    @Test func hciEventsBecomeSightingsDatedWhenHeardInABatchThatClosesOnceItHasWaited() {
        var core = Self.core(["n1"], .hciEvents(AdvertisementDecoder.Options()))
        var early: [SightingBatch] = []
        for index in 0 ..< 3 {
            let heard = Self.start + 100 * Int64(index)
            early += core.take(.hciEvent(Self.iBeaconEvent(minor: UInt16(index)), ts: heard - 5, node: "n1"), at: heard).batches
        }
        early += core.take(.tick, at: Self.start + 499).batches
        #expect(early.isEmpty, "no sighting has waited 500 ms yet")
        let batches = core.take(.tick, at: Self.start + 500).batches
        #expect(batches.map(\.node) == ["n1"] && batches.map(\.seq) == [1] && batches.map(\.sent) == [Self.start + 500])
        #expect(batches.first?.sightings.map(\.id) == (0 ..< 3).map { "ibeacon:\(Self.uuid):7:\($0)" })
        #expect(batches.first?.sightings.map(\.ts) == [Self.start - 5, Self.start + 95, Self.start + 195])
        #expect(batches.first?.sightings.map(\.tx) == [-59, -59, -59])
    }

    @Test func aBatchClosesAsSoonAsItIsFull() {
        var core = Self.core(["n1"], .simulated, batchSize: 2)
        #expect(core.take(.sightings([Self.heard(1, by: "n1", at: Self.start)]), at: Self.start).batches.isEmpty)
        let full = core.take(.sightings([Self.heard(2, by: "n1", at: Self.start + 1), Self.heard(3, by: "n1", at: Self.start + 1)]), at: Self.start + 1)
        #expect(full.batches.map(\.sightings.count) == [2])
    }

    @Test func simulatedSightingsAreBatchedByTheNodeThatHeardThem() {
        var core = Self.core(["a", "b"], .simulated)
        let step = [Self.heard(1, by: "a", at: Self.start), Self.heard(2, by: "b", at: Self.start), Self.heard(3, by: "a", at: Self.start),
                    Self.heard(4, by: "stranger", at: Self.start)]
        #expect(core.take(.sightings(step), at: Self.start).batches.isEmpty)
        let batches = core.take(.sightings([]), at: Self.start + 500).batches
        #expect(batches.map(\.node) == ["a", "b"])
        #expect(batches.map(\.seq) == [1, 1], "each node numbers its own batches")
        #expect(batches.map { $0.sightings.map(\.id) } == [["ibeacon:\(Self.uuid):7:1", "ibeacon:\(Self.uuid):7:3"], ["ibeacon:\(Self.uuid):7:2"]])
    }

    @Test func aStepIsTakenWholeBeforeItsNodesBatchesClose() {
        var core = Self.core(["a", "b"], .simulated)
        _ = core.take(.sightings([Self.heard(1, by: "a", at: Self.start), Self.heard(2, by: "b", at: Self.start)]), at: Self.start)
        let step = [Self.heard(3, by: "a", at: Self.start + 500), Self.heard(4, by: "b", at: Self.start + 500)]
        let batches = core.take(.sightings(step), at: Self.start + 500).batches
        #expect(batches.map(\.sightings.count) == [2, 2], "what every node heard in the step joins its batch before it closes")
    }

    @Test func everyNodesStatsComeOnceEachInterval() {
        var core = Self.core(["a", "b"], .simulated)
        #expect(core.take(.sightings([Self.heard(1, by: "a", at: Self.start)]), at: Self.start + 1_000).statistics.isEmpty)
        #expect(core.take(.tick, at: Self.start + 4_999).statistics.isEmpty)
        let stats = core.take(.tick, at: Self.start + 5_000).statistics
        #expect(stats.map(\.node) == ["a", "b"])
        #expect(stats.map(\.sightings) == [1, 0] && stats.map(\.uptime) == [5_000, 5_000])
        #expect(stats.map(\.reportsPerSecond) == [0.2, 0])
        #expect(stats.map(\.kinds) == [["simulated": 1], ["simulated": 0]])
        #expect(core.take(.tick, at: Self.start + 9_999).statistics.isEmpty)
        #expect(core.take(.tick, at: Self.start + 10_000).statistics.map(\.reportsPerSecond) == [0, 0], "the rate covers the last interval")
    }

    @Test func decodedNodesCountTheirReportsByFrameKind() {
        var core = Self.core(["n1"], .hciEvents(AdvertisementDecoder.Options()))
        for index in 0 ..< 4 {
            _ = core.take(.hciEvent(Self.iBeaconEvent(minor: UInt16(index)), ts: Self.start, node: "n1"), at: Self.start)
        }
        let stats = core.take(.tick, at: Self.start + 5_000).statistics
        #expect(stats.map(\.kinds) == [["ibeacon": 4]])
        #expect(stats.map(\.reportsPerSecond) == [0.8] && stats.map(\.sightings) == [4] && stats.map(\.dropped) == [0])
    }

    @Test func finishingDrainsEveryOpenBatchAndGivesTheLastStats() {
        var core = Self.core(["a", "b"], .simulated)
        _ = core.take(.sightings([Self.heard(1, by: "b", at: Self.start)]), at: Self.start)
        let last = core.finish(at: Self.start + 100)
        #expect(last.batches.map(\.node) == ["b"] && last.batches.map(\.sent) == [Self.start + 100])
        #expect(last.statistics.map(\.node) == ["a", "b"] && last.statistics.map(\.sightings) == [0, 1])
        #expect(last.statistics.map(\.reportsPerSecond) == [0, 10])
    }
}
