/// Each method's worst channel-grid cell by accuracy, by flaps and by median enter, one line per
/// method, so that engine settings can be judged by the cell they do worst in.
enum WorstCells {
    static func lines(_ rows: [ResultRow]) -> [String] {
        let cells = rows.filter { $0.scenario.hasPrefix(ChannelGrid.prefix) && $0.method != TruthReplay().name }
        var methods: [String] = []
        for row in cells where !methods.contains(row.method) { methods.append(row.method) }
        return methods.map { method in
            let mine = cells.filter { $0.method == method }
            let accuracy = worst(mine, unit: " %", lowest: true) { $0.accuracy.map { $0 * 100 } }
            let flaps = worst(mine, unit: "/dev·h") { $0.flapsPerDeviceHour }
            let enter = worst(mine, unit: " s") { percentile($0.enterLatencies, 0.5) }
            return "\(method): lowest acc \(accuracy); most flaps \(flaps); slowest enter p50 \(enter)"
        }
    }

    /// The cell where `figure` is worst (highest, or lowest with `lowest`), as "value unit (cell)";
    /// "–" when no cell has the figure.
    private static func worst(_ rows: [ResultRow], unit: String, lowest: Bool = false, _ figure: (Tally) -> Double?) -> String {
        let measured = rows.compactMap { row in figure(row.tally).map { (cell: row.scenario, value: $0) } }
        let worst = lowest ? measured.min { $0.value < $1.value } : measured.max { $0.value < $1.value }
        guard let worst else { return "–" }
        return "\(ResultTable.format(worst.value, decimals: 1))\(unit) (\(worst.cell))"
    }
}
