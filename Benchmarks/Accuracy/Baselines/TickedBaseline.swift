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
    /// The beacon the rule's own figure put first at the last `decide`, before any margin, hold
    /// or vote count (nil: none).
    var leader: String? { get }
    /// When the user was last heard.
    var lastHeard: Int64? { get }
}

/// Runs a baseline over a run: at every tick, the observations up to it go to their user's rule,
/// then each user's rule decides. What a rule decides at a tick is known at that tick (the live
/// timeline); the history dates it as the engine dates its events (`HistoryDating`).
struct BaselineMethod<Rule: TickedBaseline>: PresenceMethod {
    var name: String { Rule.name }

    func run(_ run: BenchRun) -> MethodOutput {
        var output = MethodOutput(horizon: run.end + BenchRun.flush)
        var rules: [String: Rule] = [:]
        var dating: [String: HistoryDating] = [:]
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
                guard var rule = rules[user] else { continue }
                let beacon = rule.decide(at: time)
                rules[user] = rule
                if let dated = dating[user, default: HistoryDating()].update(beacon: beacon, leader: rule.leader, lastHeard: rule.lastHeard, at: time) {
                    output.record(user: user, beacon: beacon, history: dated, live: time)
                }
            }
            time += tick
        }
        return output
    }
}

/// Dates a baseline's changes by the engine's rule, so that histories compare fairly: a change
/// to a beacon to when that beacon began to lead (the engine dates a move to when its beacon
/// became the nearer one, an enter to when it became the nearest), a change to nowhere to the
/// last sighting; never before the previous change.
struct HistoryDating: Sendable {
    private var current: String?
    private var leader: String?
    private var leaderSince = Int64.min
    private var lastChange = Int64.min

    /// The history date of a change to `beacon` decided at `time`, or nil when nothing changed.
    mutating func update(beacon: String?, leader newLeader: String?, lastHeard: Int64?, at time: Int64) -> Int64? {
        if newLeader != leader {
            leader = newLeader
            leaderSince = time
        }
        guard beacon != current else { return nil }
        current = beacon
        let dated = beacon == nil ? (lastHeard ?? time) : (beacon == leader ? leaderSince : time)
        lastChange = max(min(dated, time), lastChange)
        return lastChange
    }
}
