#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The presence engine's tuning; every figure is a flag of the aggregator and of `replay`.
/// Durations are milliseconds.
public struct EngineConfiguration: Sendable, Equatable {
    /// An observation older than this no longer qualifies a beacon (`--stale-after`).
    public var staleAfter: Int64 = 10_000
    /// Exit this long after the last qualifying sighting (`--absence-timeout`).
    public var absenceTimeout: Int64 = 15_000
    /// How much nearer, in dB of path loss, another beacon must be to win a move (`--switch-margin`).
    public var switchMargin: Double = 4
    /// How long the user's beacon must stay beaten by the margin, by whichever beacon is nearest
    /// at each moment, before the move to the nearest (`--switch-dwell`; the `dwell` decision only).
    public var switchDwell: Int64 = 3_000
    /// What a move between beacons that are not next to each other needs on top of the margin,
    /// dB, and the dwell, ms, when adjacency is declared (`--jump-margin`, `--jump-dwell`; see
    /// `PlacePolicies`).
    public var jumpMargin: Double = 6
    public var jumpDwell: Int64 = 3_000
    /// How a move is decided (`--decide`).
    public enum Decision: String, Sendable, Equatable, CaseIterable {
        /// Another beacon nearer by the margin at every look for the switch dwell.
        case dwell
        /// Another beacon's lead beyond the margin, added up over time (dB·s), reaches the switch
        /// evidence: a clear lead moves soon, a slight one late, and a moment's doubt does not
        /// start the count again (a one-sided CUSUM test per challenger).
        case evidence
        /// A hidden-Markov model over "away" and the places the user is heard near, smoothed over
        /// the last `lag` and decided once a place's probability reaches `settleProbability`
        /// (`PlaceBelief`): an enter or move is dated by the smoothed path.
        case hmm
    }

    public var decision = Decision.hmm
    /// The lead beyond the margin, summed over time, that wins a move, dB·s (`--switch-evidence`;
    /// the `evidence` decision only).
    public var switchEvidence: Double = 12
    /// How far back the `hmm` decision lets later evidence correct a step, ms (`--lag`): a move
    /// as clear as the settle probability needs is made as soon as the last 2 s settle it;
    /// one in doubt waits up to the lag.
    public var lag: Int64 = 10_000
    /// The `hmm` decision's probability, per second, that a user stays where they are
    /// (`--stay-probability`): the nearer to 1, the more evidence a move needs.
    public var stayProbability: Double = 0.995
    /// The smoothed probability a place must reach to win an enter or a move
    /// (`--settle-probability`).
    public var settleProbability: Double = 0.75
    /// How much one step's reading counts in the `hmm` decision, per dB that a place is further
    /// than the nearest (heavy-tailed: at most `evidenceCap` dB counts).
    public var stepWeight: Double = 0.25
    /// Places within this many dB of the nearest count as level with it in the `hmm` decision:
    /// shadowing that lasts seconds makes small leads that are no evidence of a move.
    public var deadZone: Double = 3
    /// The user's own place counts as level with the nearest within this many dB more
    /// (`--hold-margin`, the `hmm` decision): a few seconds of a body between tag and node are
    /// no evidence that they left.
    public var holdMargin: Double = 0
    /// Beyond this distance (m, by the path-loss model) from the nearest place, the `hmm`
    /// decision leans to "away": near no place.
    public var awayDistance: Double = 30
    /// How much the venue's layout holds a user in each step of the `hmm` decision
    /// (`--layout-weight`, per unit of misfit): each place is also scored by how well every
    /// node's reading fits the path-loss model were the user at that place, so that nodes beside
    /// and behind it count too, not only its own, and one that fits worse than the user's own
    /// place is less likely (`LayoutFit`). It needs node coordinates, and beacon coordinates or
    /// nodes anchored at the beacon; 0 leaves it out.
    public var layoutWeight: Double = 0.25
    /// The most one second adds to a challenger's evidence, dB: a current beacon no longer heard
    /// counts as this far behind. The `hmm` decision counts no place as more than this further
    /// than the nearest (its heavy tail).
    public var evidenceCap: Double = 20
    /// How long a beacon must stay the nearest before an enter (`--enter-dwell`).
    public var enterDwell: Int64 = 1_000
    /// How many sightings of that beacon an enter needs (`--enter-sightings`).
    public var enterSightings: Int = 2
    /// The exponent n of the log-distance model d = 10^((tx - rssi) / (10 n)) (`--path-loss-exponent`).
    public var pathLossExponent: Double = 2.0
    /// What decides the nearest beacon (`--choose`).
    public enum Choice: String, Sendable, Equatable, CaseIterable {
        /// The smallest smoothed path loss (tx − RSSI) of any reading of the beacon.
        case signal
        /// The beacon nearest to the position estimated from every reading (when nodes and
        /// beacons have coordinates; otherwise as `signal`).
        case position
    }

    public var choice = Choice.signal
    /// How each (device, node) RSSI stream is smoothed (`--smoothing`, `--smoothing-time`).
    public var smoothing = SmoothingSettings()
    /// How long the last evidence of a node suspected down stands (`--node-down-hold`): its
    /// sessions are not timed out, and a neighbour must beat its last readings to win.
    public var nodeDownHold: Int64 = 120_000
    /// A heartbeating node proves it still works by saying something this long after a reading.
    public var heartbeatGrace: Int64 = 2_000
    /// After a restart, resumed sessions are not timed out before this much time has passed, so
    /// that people who stayed are heard again first.
    public var resumeGrace: Int64 = 5_000

    public init() {}

    /// Checks the figures against each other; the message names the bad value.
    public func validate() throws(ValueError) {
        guard staleAfter > 0 else { throw ValueError("stale-after \(staleAfter) ms is not valid: expected more than 0") }
        guard absenceTimeout > 0 else { throw ValueError("absence-timeout \(absenceTimeout) ms is not valid: expected more than 0") }
        guard switchMargin >= 0, switchMargin.isFinite else { throw ValueError("switch-margin \(switchMargin) dB is not valid: expected 0 or more") }
        guard switchEvidence > 0, switchEvidence.isFinite else {
            throw ValueError("switch-evidence \(switchEvidence) dB·s is not valid: expected more than 0")
        }
        guard jumpMargin >= 0, jumpMargin.isFinite else { throw ValueError("jump-margin \(jumpMargin) dB is not valid: expected 0 or more") }
        guard jumpDwell >= 0 else { throw ValueError("jump-dwell \(jumpDwell) ms is not valid: expected 0 or more") }
        guard switchDwell >= 0 else { throw ValueError("switch-dwell \(switchDwell) ms is not valid: expected 0 or more") }
        guard lag >= 0, lag <= 30_000 else { throw ValueError("lag \(lag) ms is not valid: expected 0 to 30 s") }
        guard stayProbability > 0, stayProbability < 1 else {
            throw ValueError("stay-probability \(stayProbability) is not valid: expected a number between 0 and 1")
        }
        guard settleProbability >= 0.5, settleProbability < 1 else {
            throw ValueError("settle-probability \(settleProbability) is not valid: expected a number from 0.5 to below 1")
        }
        guard stepWeight > 0, stepWeight <= 10 else { throw ValueError("step-weight \(stepWeight) is not valid: expected more than 0, at most 10") }
        guard deadZone >= 0, deadZone.isFinite else { throw ValueError("dead-zone \(deadZone) dB is not valid: expected 0 or more") }
        guard holdMargin >= 0, holdMargin.isFinite else { throw ValueError("hold-margin \(holdMargin) dB is not valid: expected 0 or more") }
        guard layoutWeight >= 0, layoutWeight <= 10 else { throw ValueError("layout-weight \(layoutWeight) is not valid: expected 0 to 10") }
        guard awayDistance > 0, awayDistance.isFinite else { throw ValueError("away-distance \(awayDistance) m is not valid: expected more than 0") }
        guard enterDwell >= 0 else { throw ValueError("enter-dwell \(enterDwell) ms is not valid: expected 0 or more") }
        guard enterSightings >= 1 else { throw ValueError("enter-sightings \(enterSightings) is not valid: expected 1 or more") }
        guard pathLossExponent >= 1, pathLossExponent <= 6 else {
            throw ValueError("path-loss-exponent \(pathLossExponent) is not valid: expected a number from 1 to 6")
        }
        guard smoothing.timeConstant >= 0 else {
            throw ValueError("smoothing-time \(smoothing.timeConstant) ms is not valid: expected 0 or more")
        }
    }

    /// Estimated distance, m, of a path loss `tx - rssi` in dB.
    public func distance(pathLoss: Double) -> Double {
        pow10(pathLoss / (10 * pathLossExponent))
    }
}

/// 10^x without Foundation.
func pow10(_ x: Double) -> Double {
    exp(x * 2.302585092994046)
}
