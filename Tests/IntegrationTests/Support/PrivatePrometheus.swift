import Foundation

/// A Prometheus of one test's own (Debian's package), on a free loopback port with its data in a
/// temporary folder, scraping the given targets as job "presence-aggregator" every second and
/// evaluating the given rule files every second. Call `stop()` when done (a `defer` does).
struct PrivatePrometheus: Sendable {
    let base: String
    let directory: URL
    let process: ChildProcess

    static func start(targets: [String], ruleFiles: [String]) async throws -> PrivatePrometheus {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("presence-prometheus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = """
            global:
              scrape_interval: 1s
              evaluation_interval: 1s
            rule_files: [\(ruleFiles.map { "\"\($0)\"" }.joined(separator: ", "))]
            scrape_configs:
              - job_name: presence-aggregator
                static_configs:
                  - targets: [\(targets.map { "\"\($0)\"" }.joined(separator: ", "))]
            """
        let file = directory.appendingPathComponent("prometheus.yml")
        try config.write(to: file, atomically: true, encoding: .utf8)
        let port = try freePort()
        let process = try ChildProcess.spawn("/usr/bin/prometheus", [
            "--config.file=\(file.path)", "--storage.tsdb.path=\(directory.appendingPathComponent("data").path)",
            "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
        ])
        let prometheus = PrivatePrometheus(base: "http://127.0.0.1:\(port)", directory: directory, process: process)
        do {
            try await waitForHTTP(prometheus.base + "/-/ready", within: 30)
        } catch {
            throw TestSetupError(message: "\(error); prometheus: \(process.stderr.suffix(2000))")
        }
        return prometheus
    }

    func stop() async {
        await process.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The `data` of an API answer, or an error with Prometheus's own.
    func api(_ path: String, _ parameters: [String: String] = [:]) async throws -> Any {
        var components = URLComponents()
        components.queryItems = parameters.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        // `+` stands for a space in a query string: PromQL's own must reach Prometheus as `+`.
        let query = (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        let url = base + path + (query.isEmpty ? "" : "?" + query)
        let answer = try await httpGet(url)
        let object = answer.object
        guard answer.status == 200, object["status"] as? String == "success", let data = object["data"] else {
            throw TestSetupError(message: "\(path) \(parameters) answered \(answer.status): \(answer.body.prefix(500))")
        }
        return data
    }

    /// The series an instant query returns now (a scalar or a string counts as one).
    func query(_ expression: String) async throws -> [[String: Any]] {
        let data = try await api("/api/v1/query", ["query": expression]) as? [String: Any] ?? [:]
        switch data["resultType"] as? String {
        case "vector", "matrix": return data["result"] as? [[String: Any]] ?? []
        default: return [["value": data["result"] ?? NSNull()]]
        }
    }

    /// Every rule Prometheus loaded, with its state (`/api/v1/rules`).
    func rules() async throws -> [[String: Any]] {
        let data = try await api("/api/v1/rules") as? [String: Any] ?? [:]
        return (data["groups"] as? [[String: Any]] ?? []).flatMap { $0["rules"] as? [[String: Any]] ?? [] }
    }

    /// The alerts pending or firing now (`/api/v1/alerts`).
    func alerts() async throws -> [[String: Any]] {
        (try await api("/api/v1/alerts") as? [String: Any])?["alerts"] as? [[String: Any]] ?? []
    }
}

/// PromQL with every comparison made a `bool` one, so that an alert's expression returns a series
/// (0 or 1) for every input series whether the alert fires or not: what is left empty then is a
/// metric missing or misnamed. Label matchers, strings and durations are left as they are.
func comparisonsAsBool(_ expression: String) -> String {
    let characters = Array(expression)
    var out = ""
    var index = 0
    var depth = 0  // inside `{...}` or `[...]`
    while index < characters.count {
        let c = characters[index]
        if c == "\"" || c == "'" || c == "`" {
            var end = index + 1
            while end < characters.count, characters[end] != c {
                end += characters[end] == "\\" ? 2 : 1
            }
            out += String(characters[index ... min(end, characters.count - 1)])
            index = end + 1
            continue
        }
        if c == "{" || c == "[" { depth += 1 }
        if c == "}" || c == "]" { depth -= 1 }
        let next: Character? = index + 1 < characters.count ? characters[index + 1] : nil
        var comparison: String?
        if depth == 0 {
            if (c == "=" || c == "!" || c == ">" || c == "<"), next == "=" {
                comparison = String([c, "="])
            } else if c == ">" || c == "<" {
                comparison = String(c)
            }
        }
        guard let comparison else {
            out.append(c)
            index += 1
            continue
        }
        out += comparison
        index += comparison.count
        let rest = String(characters[index...]).drop { $0 == " " }
        if !rest.hasPrefix("bool ") { out += " bool" }
    }
    return out
}
