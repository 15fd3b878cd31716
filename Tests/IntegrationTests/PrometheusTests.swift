import Foundation
import PresenceCore
import PresenceMQTT
import Testing

extension EndToEndTests {
    /// Debian's Prometheus scraping a live aggregator while simulated nodes walk a person through
    /// two stands, with `deploy/prometheus/presence-rules.yml` loaded: every recording rule, every
    /// alert's expression (its comparisons made `bool`, so that it returns series whether it fires
    /// or not) and every Prometheus query of the Grafana dashboard return series; the dashboard's
    /// SQL returns rows as a login in presence_analyst (which cannot read devices); and a node's
    /// publisher killed makes PresenceNodeDown pending for that node alone. Among the end-to-end
    /// tests: it walks in real time.
    @Suite struct PrometheusTests {
        @Test func rulesAlertsAndEveryPanelReturnSeriesAndAKilledNodeMakesItsAlertPending() async throws {
            let h = try PipelineHarness("prometheus")
            try SimulatedVenueTests.register(h)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("mini-\(h.prefix).json")
            try SimulatedVenueTests.scenario.write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }

            let port = try freePort()
            let aggregator = try h.startAggregator(["--http", "127.0.0.1:\(port)", "--absence-timeout", "4s"])
            defer { aggregator.send(SIGKILL) }
            try await waitForHTTP("http://127.0.0.1:\(port)/readyz", within: 60)
            let rules = PackagePaths.root.appendingPathComponent("deploy/prometheus/presence-rules.yml").path
            let prometheus = try await PrivatePrometheus.start(targets: ["127.0.0.1:\(port)"], ruleFiles: [rules])
            var stopped = false
            defer { if !stopped { prometheus.process.send(SIGKILL) } }

            // A stranger's tag beside the walk, and a batch that is no JSON: the dashboard's row of
            // what is unmatched and refused has something to show.
            let publisher = try await h.publisher()
            let now = nowMilliseconds()
            try await publisher.publish(SightingBatch(node: "sim-a", seq: 1, sent: now, sightings: [
                Sighting(ts: now, id: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:9:9", rssi: -70, tx: -59),
            ]), topics: h.topics)
            try await publisher.publish(MQTTMessage(topic: h.topics.sightings(node: "sim-a"), payload: Array("not a batch".utf8)))
            await publisher.stop()

            // One scanner per node, so that one node's publisher can be killed alone.
            let scanner = try PackagePaths.executable("presence-scanner")
            let nodeA = try ChildProcess.spawn(scanner, ["--simulate", file.path, "--node", "sim-a"], environment: h.environment)
            let nodeB = try ChildProcess.spawn(scanner, ["--simulate", file.path, "--node", "sim-b"], environment: h.environment)
            defer { nodeA.send(SIGKILL); nodeB.send(SIGKILL) }
            try await eventuallyAsync(60, "sam's walk to end in two closed visits") {
                try h.rows("SELECT count(*) FROM presence.sessions_v WHERE exited_at IS NOT NULL") == ["2"]
            }
            // Both exits, whatever their reasons: the move out of the first stand is `moved` or
            // `timeout` depending on how the walk's gap falls, and each reason is its own series.
            try await eventuallyAsync(20, "Prometheus to scrape both exits") {
                try await prometheus.query(#"sum(presence_events_total{kind="exit"}) >= 2"#).count == 1
            }

            let loaded = try await prometheus.rules()
            let recording = loaded.filter { $0["type"] as? String == "recording" }
            let alerting = loaded.filter { $0["type"] as? String == "alerting" }
            #expect(recording.count == 20 && alerting.count == 13, "\(recording.count) recording rules, \(alerting.count) alerts")
            for rule in loaded {
                #expect(rule["health"] as? String == "ok", "\(rule["name"] ?? "?"): \(rule["lastError"] ?? "")")
            }
            for rule in recording {
                let name = rule["name"] as? String ?? "", expression = rule["query"] as? String ?? ""
                #expect(try await !prometheus.query(expression).isEmpty, "recording rule \(name) returns no series: \(expression)")
                #expect(try await !prometheus.query(name).isEmpty, "no series recorded as \(name)")
            }
            for rule in alerting {
                let name = rule["name"] as? String ?? "", expression = comparisonsAsBool(rule["query"] as? String ?? "")
                #expect(try await !prometheus.query(expression).isEmpty, "alert \(name) returns no series: \(expression)")
            }
            let dashboard = try GrafanaDashboard.load()
            for query in dashboard.queries where query.type == "prometheus" {
                let expression = query.text.replacingOccurrences(of: "$__rate_interval", with: "1m")
                #expect(!expression.contains("$"), "panel '\(query.panel)' uses a variable the test does not set: \(expression)")
                #expect(try await !prometheus.query(expression).isEmpty, "panel '\(query.panel)' returns no series: \(expression)")
            }
            #expect(try await prometheus.query("presence:present_users").first.flatMap(Self.number) != nil)
            #expect(try await prometheus.query(#"presence:events:rate1m{kind="enter"}"#).count == 1)

            // The dashboard's SQL, as Grafana runs it over the last six hours, as an analyst.
            let analyst = "dashboards_\(UInt32.random(in: .min ... .max))"
            _ = try h.rows("CREATE ROLE \(analyst) LOGIN IN ROLE presence_analyst")
            defer { _ = try? h.rows("DROP ROLE \(analyst)") }
            let analystURL = h.databaseURL.replacingOccurrences(of: "://postgres@", with: "://\(analyst)@")
            #expect(throws: (any Error).self, "an analyst reads no devices") { try TestDatabase.rows(analystURL, "SELECT count(*) FROM presence.devices") }
            let sql = dashboard.queries.filter { $0.type == "postgres" }
            #expect(sql.count == 3)
            for query in sql {
                let text = Self.grafanaMacros(query.text, from: Date().addingTimeInterval(-6 * 3600), to: Date())
                #expect(!text.contains("$"), "panel '\(query.panel)' uses a macro the test does not expand: \(text)")
                let rows = try TestDatabase.rows(analystURL, text)
                #expect(!rows.isEmpty, "panel '\(query.panel)' returns no rows: \(text)")
            }

            // A node's publisher dies: its will says offline, and PresenceNodeDown goes pending for it.
            func nodeDownAlerts() async throws -> [[String: Any]] {
                try await prometheus.alerts().filter { ($0["labels"] as? [String: String])?["alertname"] == "PresenceNodeDown" }
            }
            #expect(try await nodeDownAlerts().isEmpty, "PresenceNodeDown before any node went down")
            nodeB.send(SIGKILL)
            try await eventuallyAsync(30, "PresenceNodeDown to go pending for sim-b") {
                let alerts = try await nodeDownAlerts()
                return alerts.count == 1 && (alerts[0]["labels"] as? [String: String])?["node"] == "sim-b" && alerts[0]["state"] as? String == "pending"
            }

            if let path = ProcessInfo.processInfo.environment["PRESENCE_PROMETHEUS_SCREENSHOT"] {
                try await Self.screenshot(of: prometheus.base, to: path)
            }
            #expect(await nodeA.stop() == 0)
            #expect(await aggregator.stop() == 0)
            await prometheus.stop()
            stopped = true
        }

        /// Grafana's PostgreSQL macros for a time range, as Grafana expands them.
        static func grafanaMacros(_ sql: String, from: Date, to: Date) -> String {
            let format = ISO8601DateFormatter()
            let start = "'\(format.string(from: from))'", end = "'\(format.string(from: to))'"
            return sql.replacing(#/\$__timeFilter\(([^)]*)\)/#) { match in "\(match.output.1) BETWEEN \(start) AND \(end)" }
                .replacingOccurrences(of: "$__timeFrom()", with: start)
                .replacingOccurrences(of: "$__timeTo()", with: end)
        }

        static func number(_ sample: [String: Any]) -> Double? {
            ((sample["value"] as? [Any])?.last as? String).flatMap(Double.init)
        }

        /// Prometheus's own graph page of the walk (people present, events by kind, sightings per
        /// second, the nodes online), as headless Chromium draws it: docs/operations.md's picture.
        static func screenshot(of base: String, to path: String) async throws {
            let graphs = ["presence:present_users", "sum by (kind) (presence_events_total)", "presence:sightings:rate1m", "presence:node_online"]
            var query = URLComponents()
            query.queryItems = graphs.enumerated().flatMap { index, expression in
                [URLQueryItem(name: "g\(index).expr", value: expression), URLQueryItem(name: "g\(index).tab", value: "0"),
                 URLQueryItem(name: "g\(index).range_input", value: "1m")]
            }
            let url = base + "/graph?" + (query.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
            _ = try await runTool("/usr/bin/chromium", ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1280,2950",
                                                  "--virtual-time-budget=8000", "--screenshot=\(path)", url])
        }
    }
}
