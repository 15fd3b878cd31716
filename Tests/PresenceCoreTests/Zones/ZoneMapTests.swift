import Testing
@testable import PresenceCore

@Suite struct ZoneMapTests {
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"

    @Test func aBeaconLiesInItsZoneAndEveryZoneAboveItOutermostFirst() {
        let registry = Registry(
            zones: [.init(key: "floor-2"), .init(key: "hall-b", parent: "floor-2"), .init(key: "booth-row", parent: "hall-b")],
            beacons: [.init(key: "booth-12", zone: "booth-row"), .init(key: "cafe", zone: "floor-2"), .init(key: "lobby")])
        let map = ZoneMap(registry: registry)
        #expect(map.zones(of: "booth-12") == ["floor-2", "hall-b", "booth-row"])
        #expect(map.zones(of: "cafe") == ["floor-2"])
        #expect(map.zones(of: "lobby").isEmpty)
        #expect(map.beacons["floor-2"] == ["booth-12", "cafe"])
        #expect(map.beacons["hall-b"] == ["booth-12"])
        #expect(!map.isEmpty)
    }

    @Test func aLoopIsCutWhereItWouldRepeatAndAnUnknownParentEndsTheChain() {
        let registry = Registry(
            zones: [.init(key: "x", parent: "y"), .init(key: "y", parent: "x"), .init(key: "z", parent: "gone")],
            beacons: [.init(key: "b1", zone: "x"), .init(key: "b2", zone: "z"), .init(key: "b3", zone: "missing")])
        let map = ZoneMap(registry: registry)
        #expect(map.zones(of: "b1") == ["y", "x"])
        #expect(map.zones(of: "b2") == ["z"])
        #expect(map.zones(of: "b3").isEmpty)
    }

    @Test func anIBeaconRegionStandsForAZoneHoldingTheBeaconsInsideIt() {
        let u = Self.uuid
        let registry = Registry(
            zones: [.init(key: "building")],
            beacons: [
                .init(key: "venue", name: "The venue", identity: "ibeacon:\(u)", zone: "building"),
                .init(key: "hall-b", identity: "ibeacon:\(u):2"),
                .init(key: "booth-12", identity: "ibeacon:\(u):2:12"),
                .init(key: "booth-13", identity: "ibeacon:\(u):2:13", zone: "building"),
                .init(key: "booth-31", identity: "ibeacon:\(u):3:1"),
                .init(key: "other", identity: "ibeacon:00000000-0000-0000-0000-000000000001:2:12"),
            ])
        let map = ZoneMap(registry: registry)
        #expect(map.zones(of: "booth-12") == ["building", "venue", "hall-b"])
        #expect(map.zones(of: "hall-b") == ["building", "venue", "hall-b"], "the region's own beacon lies in its zone")
        #expect(map.zones(of: "booth-13") == ["building"], "a beacon's own zone comes before its region's")
        #expect(map.zones(of: "booth-31") == ["building", "venue"])
        #expect(map.zones(of: "other").isEmpty)
        #expect(map.zones["venue"]?.name == "The venue")
        #expect(map.beacons["hall-b"] == ["booth-12", "hall-b"])
    }

    @Test func noZonesMakeAnEmptyMap() {
        #expect(ZoneMap(registry: PresencePipelineTests.registry).isEmpty)
    }
}
