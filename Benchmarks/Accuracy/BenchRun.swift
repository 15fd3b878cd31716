import PresenceCore

/// Where the ground truth puts a user at a moment.
enum TruthState: Equatable, Sendable {
    /// At this beacon (dwelling at a booth, nearest to a sensor, inside a zone).
    case at(String)
    /// Known to be at no beacon (walking between booths, away).
    case nowhere
    /// Not known: outside the recording; never scored.
    case unknown

    /// The beacon, if the truth names one.
    var beacon: String? {
        if case .at(let beacon) = self { return beacon }
        return nil
    }
}

/// One continuous recording scored on its own: observations in time order (what every method
/// consumes), each user's truth, and the span to score. Methods start from nothing at `start` and
/// run on past `end` (see `flush`), so that what they decide just after it (a late exit) is seen.
struct BenchRun: Sendable {
    var name: String
    var observations: [Observation]
    var truth: [String: StepTimeline<TruthState>]
    /// Each user's nearest place at every moment (simulations); where absent, the truth judges
    /// which place an enter should name.
    var nearest: [String: StepTimeline<TruthState>] = [:]
    /// Scoring covers `start ..< end`, ms since the epoch.
    var start: Int64
    var end: Int64

    /// How long methods run past `end` at least: longer than the slowest baseline exit rule
    /// (Happy Bubbles' 45 s last-seen threshold); the engine adds its own absence timeout.
    static let flush: Int64 = 60_000
}

/// A row group of the report: a named set of runs, built only when it is about to be scored.
struct BenchScenario {
    var name: String
    /// Short description printed under the table (layout, noise, what the truth is).
    var note: String
    /// The dataset folder the runs come from, whose SOURCE.txt the report cites; nil for simulations.
    var dataset: String?
    /// A simulation held out of tuning (the channel grid); datasets are split by run instead.
    var heldOut = false
    var build: () throws -> [BenchRun]
}
