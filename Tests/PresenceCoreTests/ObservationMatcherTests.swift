import Testing
@testable import PresenceCore

@Suite struct ObservationMatcherTests {
    static let uuid = "f7826da6-4fa2-4e98-8024-bc5b71e0893e"
    let registry = Registry(
        venues: [.init(key: "expo")],
        beacons: [
            .init(key: "booth-1", venue: "expo", radius: 3),
            .init(key: "room", venue: "expo", identity: "ibeacon:\(uuid)", tx: -62),
            .init(key: "room-2", venue: "expo", identity: "ibeacon:\(uuid):2"),
            .init(key: "desk-2-7", venue: "expo", identity: "ibeacon:\(uuid):2:7"),
        ],
        nodes: [.init(key: "scan-1", venue: "expo", beacon: "booth-1", rssiOffset: -3), .init(key: "loose")],
        users: [.init(key: "alice"), .init(key: "bob", incognitoUntil: 2_000_000_000_000)],
        devices: [
            .init(identity: "ibeacon:\(uuid):9:9", user: "alice"),
            .init(identity: "mac:c4:7c:8d:6a:2b:01", user: "alice", tx: -50),
            .init(identity: "node:badge-1", user: "alice"),
            .init(identity: "ibeacon:\(uuid):9:10", user: "bob"),
        ])

    @Test func aTagHeardByAnAnchoredNodeIsNearThatBeacon() throws {
        var matcher = ObservationMatcher(registry: registry)
        let o = try matcher.match(Sighting(ts: 5, id: "ibeacon:\(Self.uuid):9:9", rssi: -60, tx: -58), node: "scan-1", time: 5).get()
        #expect(o == Observation(time: 5, user: "alice", device: "ibeacon:\(Self.uuid):9:9", beacon: "booth-1", venue: "expo", node: "scan-1",
                                 rssi: -63, tx: -58, txKnown: true, radius: 3))
        let registryTx = try matcher.match(Sighting(ts: 5, id: "mac:c4:7c:8d:6a:2b:01", rssi: -60, tx: -58), node: "scan-1", time: 5).get()
        #expect(registryTx.tx == -50)
        let defaulted = try matcher.match(Sighting(ts: 5, id: "ibeacon:\(Self.uuid):9:9", rssi: -60), node: "scan-1", time: 5).get()
        #expect(defaulted.tx == ObservationMatcher.defaultTx && !defaulted.txKnown)
    }

    @Test func aCarriedNodeHearingABeaconMatchesTheMostSpecificRegion() throws {
        var matcher = ObservationMatcher(registry: registry)
        func beacon(_ id: String) -> String? {
            try? matcher.match(Sighting(ts: 5, id: id, rssi: -60), node: "badge-1", time: 5).get().beacon
        }
        #expect(beacon("ibeacon:\(Self.uuid):2:7") == "desk-2-7")
        #expect(beacon("ibeacon:\(Self.uuid):2:8") == "room-2")
        #expect(beacon("ibeacon:\(Self.uuid):3:1") == "room")
        #expect(beacon("ibeacon:00000000-4fa2-4e98-8024-bc5b71e0893e:2:7") == nil)
        let o = try matcher.match(Sighting(ts: 5, id: "ibeacon:\(Self.uuid):3:1", rssi: -60, tx: -59), node: "badge-1", time: 5).get()
        #expect(o.user == "alice" && o.device == "node:badge-1" && o.tx == -62)
    }

    @Test func everythingElseIsDroppedWithAReason() {
        var matcher = ObservationMatcher(registry: registry)
        func drop(_ id: String, _ node: String, at time: Int64 = 5) -> ObservationMatcher.Drop? {
            if case .failure(let drop) = matcher.match(Sighting(ts: time, id: id, rssi: -60), node: node, time: time) { return drop }
            return nil
        }
        #expect(drop("ibeacon:\(Self.uuid):1:1", "scan-1") == .unregistered)
        #expect(drop("ibeacon:\(Self.uuid):9:9", "stranger") == .unknownNode)
        #expect(drop("ibeacon:\(Self.uuid):9:9", "loose") == .unknownNode)
        #expect(drop("ibeacon:\(Self.uuid):9:10", "scan-1") == .incognito)
        #expect(drop("ibeacon:\(Self.uuid):9:10", "scan-1", at: 2_000_000_000_001) == nil)
    }
}
