import Foundation
import PresenceCore
import PresenceMQTT
import Testing

extension EndToEndTests {
    /// `presencectl discover` against the real broker and database: of the identities two nodes hear,
    /// it lists only those the registry does not know, with the right nodes, counts, RSSI, tx and
    /// battery; hashed by default, in clear with `--show-identities`.
    /// Among the end-to-end tests, which run alone: it publishes in real time against deadlines.
    @Suite struct DiscoverTests {
        static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
        static let registeredTag = "ibeacon:\(uuid):1:1"
        static let inRegion = "ibeacon:\(uuid):7:5"
        static let stranger = "ibeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:2"
        static let phone = "mac:c4:7c:8d:6a:2b:01"

        static func lines(_ output: String) -> [[String: Any]] {
            output.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        }

        @Test func onlyUnregisteredIdentitiesAreListedHashedUnlessAsked() async throws {
            let h = try PipelineHarness("discover")
            try h.ctlOK("migrate")
            try h.ctlOK("beacon", "add", "booth-a", "--id", "ibeacon:\(Self.uuid):7")
            try h.ctlOK("node", "add", "node-a", "--beacon", "booth-a")
            try h.ctlOK("user", "add", "alice")
            try h.ctlOK("device", "add", Self.registeredTag, "--user", "alice")

            // Two end after --for (long enough for a loaded machine to deliver what is published once
            // they listen), the third when stopped, after them.
            let ctl = try PackagePaths.executable("presencectl")
            let clear = try ChildProcess.spawn(ctl, ["discover", "--show-identities", "--json", "--for", "60s"], environment: h.environment)
            let hashed = try ChildProcess.spawn(ctl, ["discover", "--json", "--for", "60s"], environment: h.environment)
            let table = try ChildProcess.spawn(ctl, ["discover", "--min-sightings", "2", "--for", "10m"], environment: h.environment)
            let all = [clear, hashed, table]
            try await eventually(30, "the three discovers to listen") { all.allSatisfy { $0.stderr.contains("listening") } }

            let publisher = try await h.publisher()
            let strangerRSSI: [(node: String, rssi: Int)] = [("node-a", -64), ("node-a", -60), ("node-b", -80), ("node-a", -62), ("node-b", -82)]
            for (index, heard) in strangerRSSI.enumerated() {
                let ts = nowMilliseconds()
                var sightings = [Sighting(ts: ts, id: Self.stranger, rssi: heard.rssi, tx: -59,
                                          telemetry: index == 3 ? Telemetry(batteryMillivolts: 2950, temperature: 21.5) : nil),
                                 Sighting(ts: ts, id: Self.registeredTag, rssi: -40), Sighting(ts: ts, id: Self.inRegion, rssi: -45)]
                if index == 4 { sightings.append(Sighting(ts: ts, id: Self.phone, rssi: -70)) }
                try await publisher.publish(SightingBatch(node: heard.node, seq: Int64(index + 1), sent: ts, sightings: sightings), topics: h.topics)
            }
            // A batch that is not valid JSON is ignored.
            try await publisher.publish(MQTTMessage(topic: h.topics.sightings(node: "node-a"), payload: Array("not json".utf8), qos: 1))
            for process in [clear, hashed] { #expect(await process.wait(timeout: .seconds(120)) == 0, "\(process.stderr)") }
            #expect(await table.stop(grace: .seconds(30)) == 0, "\(table.stderr)")
            await publisher.stop()

            let rows = Self.lines(clear.stdout)
            #expect(rows.compactMap { $0["id"] as? String } == [Self.stranger, Self.phone], "\(clear.stdout)")
            let stranger = try #require(rows.first)
            #expect(stranger["sightings"] as? Int == 5 && stranger["best_rssi"] as? Int == -60 && stranger["median_rssi"] as? Int == -64)
            #expect(stranger["tx"] as? Int == -59 && stranger["battery_mv"] as? Int == 2950)
            let nodes = (stranger["nodes"] as? [[String: Any]] ?? []).map { "\($0["node"] ?? "") \($0["sightings"] ?? "") \($0["best_rssi"] ?? "") \($0["median_rssi"] ?? "")" }
            #expect(nodes == ["node-a 3 -60 -62", "node-b 2 -80 -81"])
            #expect(rows.last?["sightings"] as? Int == 1 && rows.last?["tx"] == nil && rows.last?["battery_mv"] == nil)
            #expect(clear.stderr.contains("2 unregistered identities; 10 sightings of registered ones left out"), "\(clear.stderr)")

            let hashedRows = Self.lines(hashed.stdout)
            let ids = hashedRows.compactMap { $0["id"] as? String }
            #expect(ids.count == 2 && ids[0].hasPrefix("ibeacon:#") && ids[1].hasPrefix("mac:#"), "\(ids)")
            #expect(hashedRows.map { $0["sightings"] as? Int } == [5, 1])
            for identity in [Self.uuid, "2f234454", "c4:7c:8d"] {
                #expect(!hashed.stdout.contains(identity) && !table.stdout.contains(identity), "\(identity) shown in clear")
            }

            let tableLines = table.stdout.split(separator: "\n")
            #expect(tableLines.count == 2, "a header and the one identity heard twice or more: \(table.stdout)")
            #expect(tableLines.last?.contains("ibeacon:#") == true && tableLines.last?.contains("node-a -60/-62 ×3, node-b -80/-81 ×2") == true)
        }
    }
}
