import PresenceCore

/// Our engine, driven as `PresencePipeline` drives it when every sighting arrives the moment it is
/// heard: the engine decides at every multiple of the tick interval (100 ms) on the observations
/// older than the watermark (tick minus lateness, 1 s). An event's `at` dates the history
/// timeline; the tick that emitted it dates the live one.
struct EngineMethod: PresenceMethod {
    let name = "engine"
    let configuration: PresencePipeline.Configuration

    func run(_ run: BenchRun) -> MethodOutput {
        let flush = max(BenchRun.flush, configuration.engine.absenceTimeout + configuration.lateness + 5_000)
        var output = MethodOutput(horizon: run.end + flush)
        var engine = PresenceEngine(configuration: configuration.engine, now: run.start - configuration.lateness)
        let tick = max(1, configuration.tickInterval)
        let observations = run.observations
        var next = 0
        var time = (run.start / tick + 1) * tick
        while time <= output.horizon {
            while next < observations.count, observations[next].time <= time {
                engine.ingest(observations[next])
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
