import PresenceCore

/// Our engine, driven as `PresencePipeline` drives it when every sighting arrives the moment it is
/// heard: the engine decides at every multiple of the tick interval (100 ms) on the observations
/// older than the watermark (tick minus lateness, 1 s). An event's `at` dates the history; the
/// tick that emitted it dates the live one.
///
/// With `selfCalibrating`, the readings a node takes of users the engine places at that node's
/// beacon go to a `NodeOffsetEstimator`, and every reading is corrected by its node's current
/// offset, as the aggregator would correct it. The estimator is warmed up on up to
/// `warmUpRuns` of the scenario's other runs, read by an uncorrected engine (their observations
/// only, no truth: the traffic a venue heard before).
struct EngineMethod: PresenceMethod {
    let configuration: PresencePipeline.Configuration
    var selfCalibrating = false
    /// The row's name when it is not the configured engine (the previous default beside it).
    var label: String?
    static let warmUpRuns = 20

    var name: String { label ?? (selfCalibrating ? "engine self-cal" : "engine") }

    func run(_ run: BenchRun) -> MethodOutput {
        self.run(run, among: [run])
    }

    func run(_ run: BenchRun, among runs: [BenchRun]) -> MethodOutput {
        var estimator: NodeOffsetEstimator?
        if selfCalibrating {
            estimator = NodeOffsetEstimator()
            for other in runs.filter({ $0.name != run.name }).prefix(Self.warmUpRuns) {
                _ = decide(other, estimator: &estimator, correcting: false)
            }
        }
        return decide(run, estimator: &estimator, correcting: true)
    }

    /// Runs the engine over `run`; feeds `estimator` (if any) with the readings of users at the
    /// reading node's beacon and, when `correcting`, corrects every reading by its current offset.
    private func decide(_ run: BenchRun, estimator: inout NodeOffsetEstimator?, correcting: Bool) -> MethodOutput {
        let flush = max(BenchRun.flush, configuration.engine.absenceTimeout + configuration.lateness + 5_000)
        var output = MethodOutput(horizon: run.end + flush)
        var engine = PresenceEngine(configuration: configuration.engine, now: run.start - configuration.lateness)
        var offsets = correcting ? estimator?.estimates() ?? [:] : [:]
        let tick = max(1, configuration.tickInterval)
        let observations = run.observations
        var next = 0
        var time = (run.start / tick + 1) * tick
        while time <= output.horizon {
            while next < observations.count, observations[next].time <= time {
                var observation = observations[next]
                if estimator != nil, engine.presence(of: observation.user)?.beacon == observation.beacon {
                    estimator?.add(node: observation.node, pathLoss: observation.tx - observation.rssi)
                    if correcting, next % 100 == 0 { offsets = estimator?.estimates() ?? [:] }
                }
                observation.rssi += offsets[observation.node]?.offset ?? 0
                engine.ingest(observation)
                next += 1
            }
            for event in engine.advance(to: time - configuration.lateness) {
                let beacon: String? = event.kind == .enter ? event.beacon : nil
                output.record(user: event.user, beacon: beacon, history: event.at, live: time)
            }
            time += tick
        }
        return output
    }
}
