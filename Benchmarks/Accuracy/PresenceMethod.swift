import PresenceCore

/// A way of deciding, from one run's observations in time order, where each user is.
protocol PresenceMethod: Sendable {
    var name: String { get }
    func run(_ run: BenchRun) -> MethodOutput
    /// The same, for a method that may also learn, without labels, from the scenario's other
    /// runs (the traffic a venue heard before); by default it does not.
    func run(_ run: BenchRun, among runs: [BenchRun]) -> MethodOutput
}

extension PresenceMethod {
    func run(_ run: BenchRun, among runs: [BenchRun]) -> MethodOutput {
        self.run(run)
    }
}

/// What a method decided for each user over one run, as two timelines of the same changes.
struct MethodOutput: Sendable {
    /// History: sessions as the sessions table will hold them. Every method's changes are dated
    /// by the engine's rule: an enter or a move to when its beacon began to lead, an exit for
    /// silence to the last sighting (the engine's event `at`; baselines through `BaselineMethod`).
    var history: [String: StepTimeline<String?>] = [:]
    /// Live: the same changes at the moment a subscriber learns of them: the engine emits at its
    /// tick, one watermark (lateness) after `at`, and a timeout exit only when the timeout runs
    /// out; a baseline at the tick it decides.
    var live: [String: StepTimeline<String?>] = [:]
    /// The method ran up to here: a stay still open then never ended.
    var horizon: Int64

    init(horizon: Int64) {
        self.horizon = horizon
    }

    /// `user` is at `beacon` (nil: nowhere), dated `history`, known at `live`.
    mutating func record(user: String, beacon: String?, history historyTime: Int64, live liveTime: Int64) {
        history[user, default: StepTimeline(initial: nil)].set(beacon, at: historyTime)
        live[user, default: StepTimeline(initial: nil)].set(beacon, at: liveTime)
    }
}

/// The ground truth replayed as if it were a method: scored against itself it must give 100 %,
/// zero latency and nothing missed or spurious. It is the report's sanity row.
struct TruthReplay: PresenceMethod {
    let name = "truth (self-check)"

    func run(_ run: BenchRun) -> MethodOutput {
        var output = MethodOutput(horizon: run.end + BenchRun.flush)
        for (user, truth) in run.truth {
            var timeline = StepTimeline<String?>(initial: truth.initial.beacon)
            for change in truth.changes { timeline.set(change.value.beacon, at: change.time) }
            output.history[user] = timeline
            output.live[user] = timeline
        }
        return output
    }
}
