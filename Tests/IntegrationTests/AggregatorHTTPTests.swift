import Foundation
import PresenceCore
import PresenceMQTT
import Testing

extension EndToEndTests {
    /// The aggregator's HTTP face (`--http`) against the real executables, broker and database:
    /// probes, the page's JSON, and /metrics as strict Prometheus text whose counters follow traffic.
    /// Among the end-to-end tests, which run alone: it publishes in real time against deadlines.
    @Suite struct AggregatorHTTPTests {
        @Test func metricsParseAndMoveWithTrafficAndTheAPIFollowsTheEvents() async throws {
            let h = try PipelineHarness("http")
            try EndToEndTests.AggregatorWalkTests.register(h)
            try h.ctlOK("zone", "add", "front", "--venue", "expo")
            try h.ctlOK("beacon", "add", "booth-a", "--zone", "front")
            let port = try freePort()
            let base = "http://127.0.0.1:\(port)"
            let aggregator = try h.startAggregator(["--http", "127.0.0.1:\(port)"])
            defer { aggregator.send(SIGKILL) }
            try await waitForHTTP(base + "/readyz", within: 60)
            let healthz = try await httpGet(base + "/healthz")
            #expect(healthz.status == 200)
            let ready = try await httpGet(base + "/readyz").object
            #expect(ready["checks"] as? [String: Bool] == ["broker": true, "database": true, "registry": true])

            let before = try PrometheusText(try await httpGet(base + "/metrics").body)
            #expect(before.types["presence_sightings_total"] == "counter")
            #expect(before.value("presence_sightings_total") == 0)
            #expect(before.value("presence_broker_connected", ["connection": "inbound"]) == 1)
            #expect(before.value("presence_database_reachable") == 1)
            #expect(before.value("presence_ready") == 1)
            #expect(before.value("presence_shards") == 1 && before.value("presence_owned_shards") == 1)

            // Ten batches from booth a's node, two sightings each (one of them a stranger's tag).
            let publisher = try await h.publisher()
            for seq in 1 ... 10 {
                let ts = nowMilliseconds()
                try await publisher.publish(SightingBatch(node: "node-a", seq: Int64(seq), sent: ts, sightings: [
                    Sighting(ts: ts, id: EndToEndTests.AggregatorWalkTests.tag, rssi: -55, tx: -59),
                    Sighting(ts: ts, id: "ibeacon:\(EndToEndTests.AggregatorWalkTests.uuid):9:9", rssi: -60, tx: -59),
                ]), topics: h.topics)
                try await Task.sleep(for: .milliseconds(400))
            }
            try await eventuallyAsync(30, "alice at booth-a in /api/presence, and in the front zone") {
                let presence = try await httpGet(base + "/api/presence").object
                let users = presence["users"] as? [[String: Any]] ?? []
                let zones = presence["zones"] as? [[String: Any]] ?? []
                return users.count == 1 && users.first?["beacon"] as? String == "booth-a"
                    && zones.count == 1 && zones.first?["zone"] as? String == "front" && zones.first?["users"] as? [String] == ["alice"]
            }
            var after = try PrometheusText("")
            try await eventuallyAsync(30, "the counters to take in the ten batches") {
                after = try PrometheusText(try await httpGet(base + "/metrics").body)
                return after.value("presence_batches_total") == 10 && after.value("presence_decision_to_publish_seconds_count") ?? 0 >= 1
            }
            #expect(after.value("presence_sightings_total") == 20)
            #expect(after.value("presence_observations_total") == 10)
            #expect(after.value("presence_unmatched_sightings_total", ["reason": "unregistered"]) == 10)
            #expect(after.value("presence_events_total", ["kind": "enter"]) == 1)
            #expect(after.value("presence_node_online", ["node": "node-a"]) == 1 && after.value("presence_node_online", ["node": "node-b"]) == 0)
            #expect(after.types["presence_node_sightings_per_second"] == "gauge")
            #expect(after.value("presence_node_clock_skew_seconds", ["node": "node-a"]).map { abs($0) < 1 } == true, "node-a's clock is this machine's")
            #expect(after.value("presence_node_clock_skew_seconds", ["node": "node-b"]) == nil, "node-b sent nothing to estimate its clock from")
            #expect(after.value("presence_fleet_problems", ["problem": "low_battery", "subject": "tag"]) == 0)
            #expect(after.samples.filter { $0.name == "presence_fleet_problems" }.count == 6)
            #expect(after.value("presence_zone_present_users", ["zone": "front"]) == 1)
            let nodes = try await httpGet(base + "/api/nodes").object["nodes"] as? [[String: Any]] ?? []
            #expect(nodes.first { $0["key"] as? String == "node-a" }?["online"] as? Bool == true)
            #expect(after.types["presence_decision_to_publish_seconds"] == "histogram")
            let buckets = after.samples.filter { $0.name == "presence_decision_to_publish_seconds_bucket" }.map(\.value)
            #expect(!buckets.isEmpty && buckets == buckets.sorted(), "histogram buckets are cumulative")

            let events = try await httpGet(base + "/api/events?after=0").object
            let list = events["events"] as? [[String: Any]] ?? []
            #expect(list.count == 1 && list.first?["event"] as? String == "enter" && list.first?["name"] as? String == "Alice")
            #expect(list.first?["device"] == nil, "the page's events carry no device identity")
            let cursor = events["cursor"] as? Int ?? 0
            #expect(cursor == 1)
            let none = try await httpGet(base + "/api/events?after=\(cursor)").object["events"] as? [Any]
            #expect(none?.isEmpty == true)
            let bad = try await httpGet(base + "/api/events?limit=0")
            #expect(bad.status == 400)
            // Alice's stay began seconds ago: a visit from the venue's visit minimum on.
            _ = try h.rows("UPDATE presence.settings SET visit_min_dwell = interval '1 hour'")
            let early = try await httpGet(base + "/api/visits?hours=1").object["visits"] as? [[String: Any]]
            #expect(early?.isEmpty == true, "a stay shorter than the visit minimum is not a visit")
            _ = try h.rows("UPDATE presence.settings SET visit_min_dwell = interval '0'")
            let visits = try await httpGet(base + "/api/visits?hours=1").object["visits"] as? [[String: Any]] ?? []
            #expect(visits.count == 1 && visits.first?["beacon"] as? String == "booth-a" && visits.first?["visitors"] as? Int == 1)
            let page = try await httpGet(base + "/")
            #expect(page.status == 200 && page.body.contains("<script src=\"/app.js\">"))
            await publisher.stop()
        }

        @Test func aBadListenAddressIsRefusedInOneLine() async throws {
            let h = try PipelineHarness("http-flag")
            let child = try h.startAggregator(["--http", "8080"])
            let status = await child.wait()
            #expect(status != 0)
            let lines = child.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines.first?.contains("--http '8080'") == true, "\(child.stderr)")
        }
    }
}

/// Waits until `condition` holds, checking every 250 ms; throws after `seconds`.
func eventuallyAsync(_ seconds: Double, _ what: String, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw TestSetupError(message: "timed out after \(seconds) s waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(250))
    }
}
