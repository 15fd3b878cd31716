import Testing
@testable import PresenceCore

/// The `hmm` decision's model on its own: steps, slots, and a window smoothed with the evidence
/// that came after each step.
@Suite struct PlaceBeliefTests {
    @Test(arguments: [(Int64(0), Int64(0)), (499, 0), (500, 1), (-1, -1), (-500, -1), (-501, -2)])
    func stepsAreHalfSecondsFlooredEvenBefore1970(_ time: Int64, _ step: Int64) {
        #expect(PlaceBelief.stepIndex(of: time) == step)
    }

    /// a then b: the step where b's evidence begins is more b once the next steps agree.
    @Test func laterEvidenceCorrectsAnEarlierStep() throws {
        var belief = PlaceBelief(at: 0, lagSteps: 4)
        let a = belief.claimSlot(for: 1, keep: 0, pastLikelihood: 0.01, stay: 0.98)
        let b = belief.claimSlot(for: 2, keep: 0, pastLikelihood: 0.01, stay: 0.98)
        #expect(a != b && a > 0 && b > 0)
        func evidence(_ place: Int) -> PlaceBelief.Vector {
            var likelihoods = PlaceBelief.Vector(repeating: 0.05)
            likelihoods[place] = 1
            return likelihoods
        }
        for _ in 0 ..< 6 { belief.close(evidence(a), stay: 0.98) }
        belief.close(evidence(b), stay: 0.98)
        var smoothed: [PlaceBelief.Vector] = []
        belief.smooth(stay: 0.98, into: &smoothed)
        let alone = try #require(smoothed.last)[b]
        for _ in 0 ..< 3 { belief.close(evidence(b), stay: 0.98) }
        belief.smooth(stay: 0.98, into: &smoothed)
        #expect(smoothed.count == 5, "the window holds the lag and the step decided")
        let corrected = smoothed[smoothed.count - 4][b]
        #expect(corrected > alone + 0.2, "b at its first step: \(alone) alone, \(corrected) with three more steps")
        for step in smoothed { #expect(abs(step.sum() - 1) < 1e-4) }
    }

    @Test func aReleasedSlotGivesItsProbabilityToTheOthers() {
        var belief = PlaceBelief(at: 0, lagSteps: 2)
        let a = belief.claimSlot(for: 1, keep: 0, pastLikelihood: 0.01, stay: 0.9)
        let b = belief.claimSlot(for: 2, keep: 0, pastLikelihood: 0.01, stay: 0.9)
        for _ in 0 ..< 5 {
            var likelihoods = PlaceBelief.Vector(repeating: 0.5)
            likelihoods[b] = 1
            belief.close(likelihoods, stay: 0.9)
        }
        belief.release(b, stay: 0.9)
        let after = belief.latest
        #expect(after[b] == 0 && belief.slot(of: 2) == nil)
        #expect(abs(after.sum() - 1) < 1e-4 && after[a] > 0)
        #expect(belief.claimSlot(for: 3, keep: 0, pastLikelihood: 0.01, stay: 0.9) == b, "the free slot is taken again")
    }

    @Test func placesAreNumberedOnceInTheOrderMet() {
        var numbers = PlaceNumbers()
        #expect(numbers.number(of: "booth-b") == 1)
        #expect(numbers.number(of: "booth-a") == 2)
        #expect(numbers.number(of: "booth-b") == 1, "a beacon keeps its number")
        #expect(numbers.existing("booth-a") == 2 && numbers.existing("booth-c") == 0 && numbers.existing(nil) == 0)
        #expect(numbers.name(2) == "booth-a" && numbers.name(0) == "" && numbers.name(9) == "")
    }
}
