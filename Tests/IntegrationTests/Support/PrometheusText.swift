import Foundation

/// A strict reader of the Prometheus text exposition format (version 0.0.4): every line is a
/// comment (`# TYPE name type`, `# HELP name text`) or a sample `name{label="value",...} number`;
/// every sample belongs to a family with a TYPE; anything else is an error naming the line.
struct PrometheusText {
    struct Sample: Equatable {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    private(set) var types: [String: String] = [:]
    private(set) var samples: [Sample] = []

    init(_ text: String) throws {
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3)
                if parts.count >= 2, parts[1] == "TYPE" {
                    guard parts.count == 4, Self.isName(parts[2]), ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]) else {
                        throw TestSetupError(message: "bad TYPE line: \(line)")
                    }
                    guard types[String(parts[2])] == nil else { throw TestSetupError(message: "second TYPE for \(parts[2])") }
                    types[String(parts[2])] = String(parts[3])
                }
                continue
            }
            samples.append(try Self.sample(String(line)))
        }
        for sample in samples where family(of: sample.name) == nil {
            throw TestSetupError(message: "sample \(sample.name) has no TYPE")
        }
    }

    /// The value of `name` with exactly `labels`, if present.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    /// The family a sample belongs to: its own name, or a histogram's or summary's base name.
    func family(of name: String) -> String? {
        if types[name] != nil { return name }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if let type = types[base], type == "histogram" || type == "summary" { return base }
        }
        return nil
    }

    private static func isName<S: StringProtocol>(_ name: S) -> Bool {
        guard let first = name.first, first.isLetter || first == "_" || first == ":" else { return false }
        return name.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "_" || $0 == ":" }
    }

    private static func sample(_ line: String) throws -> Sample {
        guard let space = line.lastIndex(of: " ") else { throw TestSetupError(message: "bad sample: \(line)") }
        let head = line[..<space], number = line[line.index(after: space)...]
        guard let value = number == "+Inf" ? Double.infinity : number == "-Inf" ? -Double.infinity : Double(number) else {
            throw TestSetupError(message: "bad value in: \(line)")
        }
        var labels: [String: String] = [:]
        var name = String(head)
        if let brace = head.firstIndex(of: "{") {
            guard head.hasSuffix("}") else { throw TestSetupError(message: "bad labels in: \(line)") }
            name = String(head[..<brace])
            let body = head[head.index(after: brace) ..< head.index(before: head.endIndex)]
            var rest = Substring(body)
            while !rest.isEmpty {
                guard let equals = rest.firstIndex(of: "="), isName(rest[..<equals]),
                      rest[rest.index(after: equals)...].hasPrefix("\"") else { throw TestSetupError(message: "bad label in: \(line)") }
                let key = String(rest[..<equals])
                var index = rest.index(equals, offsetBy: 2)
                var text = ""
                while index < rest.endIndex, rest[index] != "\"" {
                    if rest[index] == "\\" { index = rest.index(after: index) }
                    guard index < rest.endIndex else { break }
                    text.append(rest[index])
                    index = rest.index(after: index)
                }
                guard index < rest.endIndex else { throw TestSetupError(message: "unterminated label in: \(line)") }
                labels[key] = text
                rest = rest[rest.index(after: index)...]
                if rest.hasPrefix(",") { rest = rest.dropFirst() } else if !rest.isEmpty { throw TestSetupError(message: "bad label list in: \(line)") }
            }
        }
        guard isName(name) else { throw TestSetupError(message: "bad metric name in: \(line)") }
        return Sample(name: name, labels: labels, value: value)
    }
}
