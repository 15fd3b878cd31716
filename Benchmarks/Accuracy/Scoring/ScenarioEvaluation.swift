import Dispatch
import Synchronization

/// Scores methods on a scenario's runs: each method runs over every run and is scored per user;
/// the methods run side by side, one per core.
enum ScenarioEvaluation {
    /// One tally per method, in the order of `methods`, over `runs`, which are among `scenario`'s
    /// runs (all of them unless a dataset's runs are scored one by one).
    static func tallies(_ methods: [any PresenceMethod], on runs: [BenchRun], among scenario: [BenchRun]? = nil) -> [Tally] {
        let tallies = Mutex([Tally](repeating: Tally(), count: methods.count))
        DispatchQueue.concurrentPerform(iterations: methods.count) { index in
            let tally = tally(methods[index], on: runs, among: scenario ?? runs)
            tallies.withLock { $0[index] = tally }
        }
        return tallies.withLock { $0 }
    }

    static func tally(_ method: any PresenceMethod, on runs: [BenchRun], among scenario: [BenchRun]) -> Tally {
        var tally = Tally()
        for run in runs {
            let output = method.run(run, among: scenario)
            for (user, truth) in run.truth.sorted(by: { $0.key < $1.key }) {
                tally.merge(Scorer.score(truth: truth, nearest: run.nearest[user], output: output, user: user, start: run.start, end: run.end))
            }
        }
        return tally
    }
}
