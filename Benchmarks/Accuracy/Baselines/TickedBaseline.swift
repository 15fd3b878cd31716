import PresenceCore

/// A baseline's decision rule for one user: it is shown that user's observations in time order
/// and asked, at every tick, where the user is.
protocol TickedBaseline: Sendable {
    /// The name in the report.
    static var name: String { get }
    /// Decision interval, ms.
    static var tick: Int64 { get }
    init()
    mutating func observe(_ observation: Observation)
    /// Where the user is at `time`, having seen every observation up to `time`.
    mutating func decide(at time: Int64) -> String?
}

/// Runs a baseline over a run: at every tick, the observations up to it go to their user's rule,
/// then each user's rule decides. Baselines have no watermark: what they decide at a tick is
/// published and known at that tick.
struct BaselineMethod<Rule: TickedBaseline>: PresenceMethod {
    var name: String { Rule.name }

    func run(_ run: BenchRun) -> MethodOutput {
        var output = MethodOutput(horizon: run.end + BenchRun.flush)
        var rules: [String: Rule] = [:]
        let observations = run.observations
        var next = 0
        let tick = Rule.tick
        var time = (run.start / tick + 1) * tick
        while time <= output.horizon {
            while next < observations.count, observations[next].time <= time {
                rules[observations[next].user, default: Rule()].observe(observations[next])
                next += 1
            }
            for user in rules.keys {
                let beacon = rules[user]?.decide(at: time)
                output.record(user: user, beacon: beacon, published: time, live: time)
            }
            time += tick
        }
        return output
    }
}
