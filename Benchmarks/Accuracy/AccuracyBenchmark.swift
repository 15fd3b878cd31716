import Foundation
import PresenceCore

/// `presence-bench accuracy`: scores our engine against ground truth, beside three baselines fed
/// the same observations, over simulated venues and public datasets, and prints one table.
enum AccuracyBenchmark {
    /// Runs the benchmark; exits 64 on bad arguments, 1 when a self-check fails or a scenario
    /// could not be scored (its data missing).
    static func main(_ arguments: [String]) {
        guard let command = AccuracyOptions.read(arguments) else { return }
        let (options, configuration) = command

        let clock = ContinuousClock()
        let began = clock.now
        // The `dwell` decision (the default before issue 23) beside the configured one, so that
        // the table shows what changing the default changed.
        var dwell = configuration
        dwell.engine.decision = .dwell
        var methods: [any PresenceMethod] = [
            TruthReplay(),
            EngineMethod(configuration: configuration),
            EngineMethod(configuration: configuration, selfCalibrating: true),
        ]
        if configuration.engine.decision != .dwell { methods.append(EngineMethod(configuration: dwell, label: "engine dwell")) }
        methods += [
            BaselineMethod<StrongestBaseline>(),
            BaselineMethod<HappyBubblesBaseline>(),
            BaselineMethod<MeanMarginBaseline>(),
        ] as [any PresenceMethod]
        var (failures, checks) = SelfCheck.run()
        var rows: [ResultRow] = []
        var notes: [String] = []
        var skipped = 0
        var sources: [DatasetSource] = []
        for scenario in AccuracyCatalogue.scenarios(quick: options.quick, data: options.dataDirectory) where options.selects(scenario.name) && options.includes(scenario) {
            let started = clock.now
            do {
                if let folder = scenario.dataset, !sources.contains(where: { $0.folder == folder }) {
                    sources.append(try DatasetSource.read(options.dataDirectory, folder: folder))
                }
                let runs = options.runs(try scenario.build(), of: scenario)
                for (method, tally) in zip(methods, ScenarioEvaluation.tallies(methods, on: runs)) {
                    rows.append(ResultRow(scenario: scenario.name, method: method.name, tally: tally))
                    failures += SelfCheck.lostTimeFailures(tally, scenario: scenario.name, method: method.name)
                    checks += 1
                    if method is TruthReplay {
                        failures += SelfCheck.truthFailures(tally, scenario: scenario.name)
                        checks += 1
                    }
                }
                if options.perRun, scenario.dataset != nil, (2 ... 20).contains(runs.count) {
                    for run in runs {
                        for (method, tally) in zip(methods, ScenarioEvaluation.tallies(methods, on: [run], among: runs)) where !(method is TruthReplay) {
                            rows.append(ResultRow(scenario: "\(scenario.name) · \(run.name)", method: method.name, tally: tally))
                        }
                    }
                }
                let observations = runs.reduce(0) { $0 + $1.observations.count }
                notes.append("\(scenario.name): \(scenario.note) (\(runs.count) run\(runs.count == 1 ? "" : "s"), "
                             + "\(observations) observations, scored in \(seconds(clock.now - started)) s)")
            } catch {
                warn("skipped \(scenario.name): \(error)")
                skipped += 1
                notes.append("\(scenario.name): skipped: \(error)")
            }
        }

        let table = ResultTable(rows: rows)
        let report = Report(markdown: options.markdown)
        report.heading("presence-bench accuracy: the engine against ground truth and three baselines")
        report.line("engine (\(options.overrides.isEmpty ? "defaults" : "with --set")): \(EngineSettings.describe(configuration))")
        report.line("data: \(options.dataDirectory)\(options.quick ? "  (--quick: small simulations)" : ""); part: \(options.part.rawValue)"
                    + (options.part == .all ? "" : options.part == .tuning ? " (sim scenarios, even-numbered dataset runs)" : " (grid scenarios, odd-numbered dataset runs: held out)"))
        report.table(options.markdown ? table.markdown() : table.plain())
        report.list("Channel grid: worst cells", WorstCells.lines(rows))
        report.list("Self-calibration (the calib scenarios: the engine's dwell accuracy with the node gains unknown, fitted from node links, known)",
                    ["engine", "engine self-cal"].compactMap { method in
                        CalibrationExperiment.recovered(rows, method: method).map { result in
                            "\(method): \(ResultTable.format(result.unknown * 100, decimals: 1)) % → \(ResultTable.format(result.fitted * 100, decimals: 1)) % "
                                + "(true gains: \(ResultTable.format(result.known * 100, decimals: 1)) %): "
                                + (result.share.map { "\(ResultTable.format($0 * 100, decimals: 0)) % of the gap recovered" } ?? "no gap to recover")
                        }
                    })
        report.list("Scenarios", notes)
        report.list("Datasets (as their SOURCE.txt states)", sources.map { "\($0.folder): " + $0.lines.joined(separator: "; ") })
        report.list("Legend", Legend.lines)
        report.list("Self-checks", failures.isEmpty
                    ? ["\(checks) passed: metric arithmetic on hand-made timelines, baselines on a clean two-beacon walk, the truth scored against itself in every scenario, and every row's lost time adding up"]
                    : failures)
        report.line("ran in \(seconds(clock.now - began)) s, the methods of each scenario side by side on \(ProcessInfo.processInfo.activeProcessorCount) cores")
        if !failures.isEmpty || skipped > 0 { exit(1) }
    }

    private static func seconds(_ duration: Duration) -> String {
        let (whole, fraction) = duration.components
        return ResultTable.format(Double(whole) + Double(fraction) / 1e18, decimals: 1)
    }
}
