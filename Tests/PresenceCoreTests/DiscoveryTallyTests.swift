import Testing
@testable import PresenceCore

/// `DiscoveryTally`: registered identities left out (devices, beacons, regions, nodes' own
/// beacons), the rest tallied per node, strongest first, and shown hashed on request.
@Suite struct DiscoveryTallyTests {
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    static var registry: Registry {
        Registry(beacons: [.init(key: "booth-a", identity: "ibeacon:\(uuid):7"), .init(key: "booth-b", identity: "eddystone:edd1ebeac04e5defa017:0123456789ab")],
                 nodes: [.init(key: "node-a", beacon: "booth-a")],
                 users: [.init(key: "alice")],
                 devices: [.init(identity: "ibeacon:\(uuid):1:1", user: "alice"), .init(identity: "node:badge-9", user: "alice")])
    }

    @Test func registeredIdentitiesAreLeftOut() {
        let tally = DiscoveryTally(registry: Self.registry)
        #expect(tally.isRegistered("ibeacon:\(Self.uuid):1:1"), "a device")
        #expect(tally.isRegistered("ibeacon:\(Self.uuid):7:42"), "inside a beacon's region")
        #expect(tally.isRegistered("eddystone:edd1ebeac04e5defa017:0123456789ab"), "a beacon")
        #expect(tally.isRegistered(NodeBeacon.identity(of: "node-a")) && tally.isRegistered(NodeBeacon.identity(of: "badge-9")), "nodes' own beacons")
        #expect(!tally.isRegistered("ibeacon:\(Self.uuid):8:1") && !tally.isRegistered("mac:c4:7c:8d:6a:2b:01"))
    }

    @Test func unregisteredIdentitiesAreTalliedPerNodeStrongestFirst() {
        var tally = DiscoveryTally(registry: Self.registry)
        let tag = "ibeacon:\(Self.uuid):8:1"
        let phone = "mac:c4:7c:8d:6a:2b:01"
        for (index, rssi) in [-70, -60, -65, -61].enumerated() {
            tally.add(Sighting(ts: 1000 + Int64(index), id: tag, rssi: rssi, tx: -59), node: "node-a")
        }
        tally.add(Sighting(ts: 900, id: tag, rssi: -80, telemetry: Telemetry(batteryMillivolts: 2900)), node: "node-b")
        tally.add(Sighting(ts: 950, id: phone, rssi: -50), node: "node-b")
        tally.add(Sighting(ts: 960, id: "ibeacon:\(Self.uuid):1:1", rssi: -40), node: "node-a")
        let rows = tally.rows()
        #expect(rows.map(\.identity) == [phone, tag])
        #expect(tally.registeredSightings == 1)
        let row = rows[1]
        #expect(row.sightings == 5 && row.bestRSSI == -60 && row.medianRSSI == -65 && row.lastHeard == 1003)
        #expect(row.tx == -59 && row.batteryMillivolts == 2900, "the last stated tx and battery")
        #expect(row.nodes == [.init(node: "node-a", sightings: 4, bestRSSI: -60, medianRSSI: -63), .init(node: "node-b", sightings: 1, bestRSSI: -80, medianRSSI: -80)])
        #expect(tally.rows(minimumSightings: 2).map(\.identity) == [tag])
    }

    @Test func pseudonymsKeepTheKindAndAreStableWithinOneKeyOnly() {
        let key = SipHash24.Key(k0: 1, k1: 2)
        let tag = "ibeacon:\(Self.uuid):8:1"
        let shown = DiscoveryTally.pseudonym(tag, key: key)
        #expect(shown.hasPrefix("ibeacon:#") && shown.count == "ibeacon:#".count + 12 && !shown.contains(Self.uuid))
        #expect(shown == DiscoveryTally.pseudonym(tag, key: key))
        #expect(shown != DiscoveryTally.pseudonym(tag, key: SipHash24.Key(k0: 1, k1: 3)))
        #expect(shown != DiscoveryTally.pseudonym("ibeacon:\(Self.uuid):8:2", key: key))
    }
}
