import Foundation

/// One line of the report: a method's tally in a scenario.
struct ResultRow: Sendable {
    var scenario: String
    var method: String
    var tally: Tally
}

/// The report's table, as aligned plain text or as Markdown; the scenario is named on its first
/// row only.
struct ResultTable {
    static let headers = ["scenario", "method", "acc % hist/live", "lost % missed/late/early/gaps", "false % hist/live", "trans made/true", "×true", "flaps/dev·h",
                          "enter p50/p90 s", "exit p50/p90 s", "stays", "missed in/out", "spurious (walking)",
                          "1st enter % nearest", "visits made/true", "dev·h"]

    var rows: [ResultRow]

    func cells() -> [[String]] {
        var previous: String?
        return rows.map { row in
            let tally = row.tally
            defer { previous = row.scenario }
            return [
                row.scenario == previous ? "" : row.scenario,
                row.method,
                Self.pair(tally.accuracy.map { $0 * 100 }, tally.liveAccuracy.map { $0 * 100 }),
                Self.lostShares(tally),
                Self.pair(tally.falsePresence.map { $0 * 100 }, tally.liveFalsePresence.map { $0 * 100 }),
                "\(tally.transitions)/\(tally.trueTransitions)",
                Self.format(tally.trueTransitions > 0 ? Double(tally.transitions) / Double(tally.trueTransitions) : nil, decimals: 1),
                Self.format(tally.flapsPerDeviceHour, decimals: 1),
                Self.pair(percentile(tally.enterLatencies, 0.5), percentile(tally.enterLatencies, 0.9)),
                Self.pair(percentile(tally.exitLatencies, 0.5), percentile(tally.exitLatencies, 0.9)),
                "\(tally.dwells)",
                "\(tally.missedEnters)/\(tally.missedExits)",
                tally.absentTime > 0 ? "\(tally.spurious) (\(tally.spuriousWhileAbsent))" : "\(tally.spurious)",
                Self.format(tally.firstEnterAccuracy.map { $0 * 100 }, decimals: 1),
                "\(tally.visits)/\(tally.trueVisits)",
                Self.format(Double(tally.deviceTime) / 3_600_000, decimals: 1),
            ]
        }
    }

    /// Columns padded to line up; text columns to the left, figures to the right.
    func plain() -> String {
        let body = cells()
        let widths = Self.headers.indices.map { column in ([Self.headers] + body).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.indices.map { column in
                let padding = String(repeating: " ", count: widths[column] - cells[column].count)
                return column < 2 ? cells[column] + padding : padding + cells[column]
            }.joined(separator: "  ")
        }
        var lines = [line(Self.headers), String(repeating: "-", count: widths.reduce(0, +) + 2 * (widths.count - 1))]
        for (index, cells) in body.enumerated() {
            if index > 0, !cells[0].isEmpty { lines.append("") }
            lines.append(line(cells))
        }
        return lines.joined(separator: "\n")
    }

    func markdown() -> String {
        var lines = ["| " + Self.headers.joined(separator: " | ") + " |",
                     "|" + Self.headers.indices.map { $0 < 2 ? "---|" : "---:|" }.joined()]
        for cells in cells() { lines.append("| " + cells.joined(separator: " | ") + " |") }
        return lines.joined(separator: "\n")
    }

    /// The lost time's parts as percentages of the present time, "–" when nothing was present.
    static func lostShares(_ tally: Tally) -> String {
        guard tally.presentTime > 0 else { return "–" }
        let lost = tally.lost
        return [lost.missed, lost.late, lost.early, lost.gaps]
            .map { format(Double($0) * 100 / Double(tally.presentTime), decimals: 1) }
            .joined(separator: "/")
    }

    /// `value` with `decimals` digits after the point ("–" when there is none); never "-0.0".
    static func format(_ value: Double?, decimals: Int) -> String {
        guard let value, value.isFinite else { return "–" }
        var scale = 1.0
        for _ in 0 ..< decimals { scale *= 10 }
        return String(format: "%.\(decimals)f", (value * scale).rounded() / scale + 0)
    }

    private static func pair(_ first: Double?, _ second: Double?) -> String {
        guard first != nil || second != nil else { return "–" }
        return format(first, decimals: 1) + "/" + format(second, decimals: 1)
    }
}
