import Foundation
import PresenceCLI
import PresenceCore

/// A fleet health report for people: when it was made, the problems one per line, then a table
/// each of beacons, tags and nodes. Times are shown as ages relative to the report.
enum HealthText {
    static func render(_ report: FleetReport, now: Int64) -> String {
        var lines = ["fleet health at \(Timestamps.iso8601(report.at)) (\(age(TimeBounds.difference(now, report.at))) ago)"]
        lines.append(report.problems.isEmpty ? "no problems" : "\(report.problems.count) problem\(report.problems.count == 1 ? "" : "s"):")
        lines += report.problems.map { "  " + problem($0, at: report.at) }
        let heard = { (time: Int64?) in time.map { age(TimeBounds.difference(report.at, $0)) + " ago" } ?? "never" }
        let battery = { (radio: FleetReport.Radio) in radio.batteryMillivolts.map { "\($0) mV" } ?? "-" }
        let temperature = { (radio: FleetReport.Radio) in radio.temperature.map { String(format: "%.1f °C", $0) } ?? "-" }
        let uptime = { (radio: FleetReport.Radio) in radio.uptime.flatMap { Int64(exactly: ($0 * 1000).rounded()) }.map(age) ?? "-" }
        if !report.beacons.isEmpty {
            lines += ["", TableOutput.render(header: ["BEACON", "ID", "LAST HEARD", "BATTERY", "TEMPERATURE", "UPTIME"], rows: report.beacons.map {
                [$0.key, $0.identity, heard($0.radio.lastHeard), battery($0.radio), temperature($0.radio), uptime($0.radio)]
            })]
        }
        if !report.tags.isEmpty {
            lines += ["", TableOutput.render(header: ["TAG", "LAST HEARD", "BATTERY", "TEMPERATURE", "UPTIME"], rows: report.tags.map {
                [$0.identity, heard($0.radio.lastHeard), battery($0.radio), temperature($0.radio), uptime($0.radio)]
            })]
        }
        if !report.nodes.isEmpty {
            lines += ["", TableOutput.render(header: ["NODE", "STATE", "LAST HEARD", "LAST BATCH", "SIGHTINGS/S", "REPORTS/S", "CLOCK"], rows: report.nodes.map {
                [$0.key + ($0.carried ? " (carried)" : ""), $0.state.rawValue, heard($0.lastHeard), heard($0.lastBatch),
                 String(format: "%.1f", $0.sightingsPerSecond), $0.reportsPerSecond.map { String(format: "%.1f", $0) } ?? "-",
                 $0.skew.map(clock) ?? "-"]
            })]
        }
        return lines.joined(separator: "\n")
    }

    /// One problem: "low battery  tag ibeacon:…  2410 mV", "silent  beacon booth-2  last heard 12m ago".
    static func problem(_ problem: FleetReport.Problem, at time: Int64) -> String {
        let subject = problem.subject.member
        let detail = switch problem.kind {
        case .lowBattery: problem.batteryMillivolts.map { "\($0) mV" } ?? ""
        case .silent: problem.lastHeard.map { "last heard \(age(TimeBounds.difference(time, $0))) ago" } ?? "not heard since the aggregator started"
        case .nodeDown: (problem.state == .offline ? "offline" : "silent") + (problem.lastHeard.map { ", last heard \(age(TimeBounds.difference(time, $0))) ago" } ?? ", never heard")
        case .nodeSkewed: problem.skew.map(clock) ?? ""
        }
        return "\(problem.kind.rawValue.replacingOccurrences(of: "_", with: " "))  \(subject.name) \(subject.value)  \(detail)"
    }

    /// Whether the report is older than twice the interval it is published at, plus 10 s.
    static func isStale(_ report: FleetReport, now: Int64) -> Bool {
        TimeBounds.difference(now, report.at) > TimeBounds.sum(TimeBounds.sum(report.thresholds.interval, report.thresholds.interval), 10_000)
    }

    /// "850ms", "12s", "5m", "3h", "2d".
    static func age(_ milliseconds: Int64) -> String {
        let value = max(0, milliseconds)
        if value < 1_000 { return "\(value)ms" }
        if value < 60_000 { return "\(value / 1_000)s" }
        if value < 3_600_000 { return "\(value / 60_000)m" }
        if value < 172_800_000 { return "\(value / 3_600_000)h" }
        return "\(value / 86_400_000)d"
    }

    /// A clock's skew: "5.0 s fast", "1.2 s slow", "in step" (within 50 ms).
    static func clock(_ skew: Int64) -> String {
        guard skew.magnitude >= 50 else { return "in step" }
        return String(format: "%.1f s ", Double(skew.magnitude) / 1000) + (skew > 0 ? "fast" : "slow")
    }
}
