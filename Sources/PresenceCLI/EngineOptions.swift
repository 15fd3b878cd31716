import ArgumentParser
import PresenceCore

/// The presence engine's tuning flags, shared by `presence-aggregator` and `presencectl replay`
/// so that a replay decides exactly as the live aggregator does.
public struct EngineOptions: ParsableArguments {
    @Option(help: "Exit this long after the last qualifying sighting.")
    public var absenceTimeout = "15s"

    @Option(help: "Observations older than this no longer qualify a beacon.")
    public var staleAfter = "10s"

    @Option(help: "How enters and moves are decided: dwell (nearer by the margin for the switch dwell), evidence (the lead beyond the margin, summed over time, reaches the switch evidence) or hmm (a hidden-Markov model over the places heard, smoothed over --lag, a place winning at --settle-probability).")
    public var decide = "hmm"

    @Option(help: "How far back later readings may correct a step (--decide hmm): a clear move is made as soon as the last 2 s settle it, a doubtful one waits up to this.")
    public var lag = "10s"

    @Option(help: "The probability, per second, that a user stays where they are (--decide hmm): nearer to 1, moves need more evidence.")
    public var stayProbability = 0.995

    @Option(help: "The smoothed probability a place must reach to win an enter or a move (--decide hmm).")
    public var settleProbability = 0.75

    @Option(help: "How much a half-second reading counts per dB that a place is further than the nearest (--decide hmm).")
    public var stepWeight = 0.25

    @Option(help: "Places within this many dB of the nearest count as level with it (--decide hmm).")
    public var deadZone = 3.0

    @Option(help: "The user's own place counts as level with the nearest within this many dB more (--decide hmm): raise it where bodies often block the tag for seconds.")
    public var holdMargin = 0.0

    @Option(help: "Beyond this distance (m, by the path-loss model) from every place, the user leans to being near none (--decide hmm).")
    public var awayDistance = 30.0

    @Option(help: "How much the layout holds a user (--decide hmm): a place that fits every node's reading worse than the user's own, by the path-loss model, is less likely. Needs node coordinates; 0 leaves it out.")
    public var layoutWeight = 0.25

    @Option(help: "How much nearer (dB) another beacon must be to win a move.")
    public var switchMargin = 4.0

    @Option(help: "How long the user's beacon must stay beaten by the margin, by whichever beacon is nearest, before a move to the nearest (--decide dwell).")
    public var switchDwell = "3s"

    @Option(help: "The lead beyond the margin, summed over time (dB·s), that wins a move (--decide evidence).")
    public var switchEvidence = 12.0

    @Option(help: "What a move between beacons that are not next to each other needs on top of the margin, dB (when beacons declare --next-to).")
    public var jumpMargin = 6.0

    @Option(help: "What such a move needs on top of the dwell.")
    public var jumpDwell = "3s"

    @Option(help: "How long a beacon must stay the nearest before an enter (--decide hmm: 0s enters as soon as a half-second step names a place; otherwise the place must settle).")
    public var enterDwell = "1s"

    @Option(help: "How many sightings of that beacon an enter needs.")
    public var enterSightings = 2

    @Option(help: "Exponent n of the log-distance model d = 10^((tx - rssi) / (10 n)).")
    public var pathLossExponent = 2.0

    @Option(help: "What decides the nearest beacon: signal (path loss) or position (the beacon nearest the estimated position; needs coordinates).")
    public var choose = "signal"

    @Option(help: "How RSSI is smoothed per (device, node): kalman, exponential or median.")
    public var smoothing = "kalman"

    @Option(help: "Time constant of the exponential smoother (the median's window is twice this).")
    public var smoothingTime = "1500ms"

    @Option(help: "How long to wait for late sightings before deciding (the watermark's lag).")
    public var lateness = "1s"

    @Option(help: "How long a node that went offline or silent keeps defending its sessions.")
    public var nodeDownHold = "2m"

    @Option(help: "A node whose clock is off by more than this has its timestamps corrected.")
    public var clockSkew = "2s"

    @Option(help: "A batch sent further ahead of its arrival than this is refused (counted as sent_ahead): a node's clock that fast, or a forged 'sent'.")
    public var maxSentAhead = "10m"

    @Flag(help: "Fit each node's RSSI offset from the node beacons nodes hear of each other (presence-scanner --advertise; nodes need coordinates). A node registered with an RSSI offset keeps it.")
    public var selfCalibrate = false

    public init() {}

    /// The pipeline configuration these flags describe; a bad value names the flag.
    public func pipelineConfiguration() throws -> PresencePipeline.Configuration {
        var configuration = PresencePipeline.Configuration()
        var engine = EngineConfiguration()
        engine.absenceTimeout = try DurationText.milliseconds(absenceTimeout, what: "--absence-timeout")
        engine.staleAfter = try DurationText.milliseconds(staleAfter, what: "--stale-after")
        engine.switchMargin = switchMargin
        engine.switchDwell = try DurationText.milliseconds(switchDwell, what: "--switch-dwell")
        guard let decision = EngineConfiguration.Decision(rawValue: decide) else {
            throw ValueError("--decide '\(decide)' is not valid: expected \(EngineConfiguration.Decision.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        engine.decision = decision
        engine.switchEvidence = switchEvidence
        engine.lag = try DurationText.milliseconds(lag, what: "--lag")
        engine.stayProbability = stayProbability
        engine.settleProbability = settleProbability
        engine.stepWeight = stepWeight
        engine.deadZone = deadZone
        engine.holdMargin = holdMargin
        engine.awayDistance = awayDistance
        engine.layoutWeight = layoutWeight
        engine.jumpMargin = jumpMargin
        engine.jumpDwell = try DurationText.milliseconds(jumpDwell, what: "--jump-dwell")
        engine.enterDwell = try DurationText.milliseconds(enterDwell, what: "--enter-dwell")
        engine.enterSightings = enterSightings
        engine.pathLossExponent = pathLossExponent
        guard let choice = EngineConfiguration.Choice(rawValue: choose) else {
            throw ValueError("--choose '\(choose)' is not valid: expected signal or position")
        }
        engine.choice = choice
        guard let method = SmoothingMethod(rawValue: smoothing) else {
            throw ValueError("--smoothing '\(smoothing)' is not valid: expected \(SmoothingMethod.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        engine.smoothing.method = method
        engine.smoothing.timeConstant = try DurationText.milliseconds(smoothingTime, what: "--smoothing-time")
        engine.nodeDownHold = try DurationText.milliseconds(nodeDownHold, what: "--node-down-hold")
        try engine.validate()
        configuration.engine = engine
        configuration.lateness = try DurationText.milliseconds(lateness, what: "--lateness")
        configuration.skewThreshold = try DurationText.milliseconds(clockSkew, what: "--clock-skew")
        configuration.maxSentAhead = try DurationText.milliseconds(maxSentAhead, what: "--max-sent-ahead")
        guard configuration.maxSentAhead > configuration.skewThreshold else {
            throw ValueError("--max-sent-ahead '\(maxSentAhead)' is not valid: expected more than --clock-skew (\(clockSkew))")
        }
        configuration.selfCalibrate = selfCalibrate
        return configuration
    }
}
