#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The `hmm` decision's figures that follow from the configuration alone, worked out once.
struct StepModel: Sendable {
    /// The probability of staying at a place over one step.
    let stay: Float
    /// The likelihood of a place heard far away (behind by the evidence cap).
    let far: Float
    /// The path loss at the away distance: a place heard further than it counts as behind.
    let awayLoss: Double
    /// The smoothed probability that settles a place, and the one that makes it all but certain.
    let settle: Float
    let certain: Float

    init(_ configuration: EngineConfiguration) {
        stay = Float(pow(configuration.stayProbability, Double(PlaceBelief.step) / 1000))
        far = Float(exp(-configuration.stepWeight * configuration.evidenceCap))
        awayLoss = 10 * configuration.pathLossExponent * log10(configuration.awayDistance)
        settle = Float(configuration.settleProbability)
        certain = 1 - (1 - settle) / 5
    }
}
