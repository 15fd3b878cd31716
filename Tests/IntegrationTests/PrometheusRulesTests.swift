import Foundation
import Testing
import Yams

/// The Prometheus rules and the Grafana dashboard in `deploy/`, checked by Debian's promtool and
/// read as their tools read them, without servers: the rules load, every alert has `promtool test
/// rules` cases where it fires and where it does not (and they pass), the example configuration
/// loads, and every dashboard panel reads one of the two provisioned data sources.
@Suite struct PrometheusRulesTests {
    static let folder = PackagePaths.root.appendingPathComponent("deploy/prometheus")
    static let rules = folder.appendingPathComponent("presence-rules.yml")
    static let cases = folder.appendingPathComponent("presence-rules.test.yml")

    @Test func promtoolLoadsTheRulesAndTheirTestsPass() async throws {
        let checked = try await runTool("/usr/bin/promtool", ["check", "rules", Self.rules.path])
        #expect(checked.contains("SUCCESS"), "\(checked)")
        let tested = try await runTool("/usr/bin/promtool", ["test", "rules", Self.cases.path])
        #expect(tested.contains("SUCCESS"), "\(tested)")
    }

    @Test func everyAlertHasACaseWhereItFiresAndOneWhereItDoesNot() throws {
        let alerts = try Self.alertNames()
        #expect(alerts.count >= 13, "\(alerts)")
        let tests = try Self.yaml(Self.cases)["tests"] as? [[String: Any]] ?? []
        var fires: Set<String> = [], quiet: Set<String> = []
        for test in tests {
            for check in test["alert_rule_test"] as? [[String: Any]] ?? [] {
                guard let name = check["alertname"] as? String else { continue }
                if (check["exp_alerts"] as? [Any])?.isEmpty == false { fires.insert(name) } else { quiet.insert(name) }
            }
        }
        #expect(alerts.subtracting(fires).isEmpty, "alerts never seen firing: \(alerts.subtracting(fires).sorted())")
        #expect(alerts.subtracting(quiet).isEmpty, "alerts never seen quiet: \(alerts.subtracting(quiet).sorted())")
        #expect(fires.union(quiet).subtracting(alerts).isEmpty, "cases of alerts that do not exist: \(fires.union(quiet).subtracting(alerts).sorted())")
    }

    @Test func theExampleConfigurationLoadsWithTheRules() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("prometheus-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let example = try String(contentsOf: Self.folder.appendingPathComponent("prometheus.yml"), encoding: .utf8)
        let installed = "/usr/share/presence-aggregator/prometheus/presence-rules.yml"
        #expect(example.contains(installed), "the example names the rules where the package installs them")
        let config = folder.appendingPathComponent("prometheus.yml")
        try example.replacingOccurrences(of: installed, with: Self.rules.path).write(to: config, atomically: true, encoding: .utf8)
        let checked = try await runTool("/usr/bin/promtool", ["check", "config", config.path])
        #expect(checked.contains("SUCCESS: 33 rules found"), "\(checked)")
    }

    @Test func everyPanelReadsAProvisionedDataSource() throws {
        let provisioned = try Self.yaml(PackagePaths.root.appendingPathComponent("deploy/grafana/provisioning/datasources/presence.yml"))
        let sources = Dictionary(uniqueKeysWithValues: (provisioned["datasources"] as? [[String: Any]] ?? []).compactMap { source in
            (source["uid"] as? String).map { ($0, source["type"] as? String ?? "") }
        })
        #expect(sources == ["presence-prometheus": "prometheus", "presence-postgres": "postgres"])
        let dashboard = try GrafanaDashboard.load()
        #expect(dashboard.uid == "presence")
        #expect(Set(dashboard.panels.map(\.id)).count == dashboard.panels.count, "panel ids repeat")
        let queries = dashboard.queries
        #expect(queries.count >= 30)
        for query in queries {
            #expect(sources[query.source] == query.type, "panel '\(query.panel)' reads \(query.source) (\(query.type))")
        }
        #expect(queries.contains { $0.type == "postgres" } && queries.contains { $0.type == "prometheus" })
    }

    @Test(arguments: [
        (#"up{job="presence-aggregator"} == 0"#, #"up{job="presence-aggregator"} == bool 0"#),
        (#"x{a!="b",c=~"d"} > 8 * 1024"#, #"x{a!="b",c=~"d"} > bool 8 * 1024"#),
        ("increase(y[5m]) >= bool 1 and z <= 2", "increase(y[5m]) >= bool 1 and z <= bool 2"),
        ("a > on () group_left () b", "a > bool on () group_left () b"),
        (#"abs(s{n=">"}) != 0"#, #"abs(s{n=">"}) != bool 0"#),
    ])
    func alertExpressionsAnswerWhetherOrNotTheyFire(expression: String, rewritten: String) {
        #expect(comparisonsAsBool(expression) == rewritten)
    }

    /// The names of the alerts in the rules file.
    static func alertNames() throws -> Set<String> {
        let groups = try yaml(rules)["groups"] as? [[String: Any]] ?? []
        return Set(groups.flatMap { $0["rules"] as? [[String: Any]] ?? [] }.compactMap { $0["alert"] as? String })
    }

    static func yaml(_ url: URL) throws -> [String: Any] {
        let text = try String(contentsOf: url, encoding: .utf8)
        guard let object = try Yams.load(yaml: text) as? [String: Any] else { throw TestSetupError(message: "\(url.path) is not a YAML mapping") }
        return object
    }
}

/// The Grafana dashboard in `deploy/grafana/dashboards/presence.json`, read as Grafana reads it:
/// its panels (those inside rows too) and each one's queries.
struct GrafanaDashboard {
    struct Panel {
        let id: Int
        let title: String
        let object: [String: Any]
    }

    /// One query of a panel: PromQL for Prometheus, SQL for PostgreSQL.
    struct Query {
        let panel: String
        let source: String
        let type: String
        let text: String
    }

    let uid: String
    let panels: [Panel]

    static func load() throws -> GrafanaDashboard {
        let url = PackagePaths.root.appendingPathComponent("deploy/grafana/dashboards/presence.json")
        guard let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] else {
            throw TestSetupError(message: "\(url.path) is not a JSON object")
        }
        func flatten(_ list: [[String: Any]]) -> [[String: Any]] {
            list.flatMap { [$0] + flatten($0["panels"] as? [[String: Any]] ?? []) }
        }
        let panels = flatten(object["panels"] as? [[String: Any]] ?? []).map {
            Panel(id: $0["id"] as? Int ?? -1, title: $0["title"] as? String ?? "", object: $0)
        }
        return GrafanaDashboard(uid: object["uid"] as? String ?? "", panels: panels)
    }

    var queries: [Query] {
        panels.flatMap { panel in
            (panel.object["targets"] as? [[String: Any]] ?? []).map { target in
                let source = (target["datasource"] ?? panel.object["datasource"]) as? [String: Any] ?? [:]
                let type = source["type"] as? String ?? ""
                return Query(panel: panel.title, source: source["uid"] as? String ?? "", type: type,
                             text: (type == "postgres" ? target["rawSql"] : target["expr"]) as? String ?? "")
            }
        }
    }
}
