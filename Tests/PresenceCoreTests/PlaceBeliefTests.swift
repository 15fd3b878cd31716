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

    /// A step that changes several slots filters its window once, when it closes: a place given
    /// up, one taking the freed slot and one taking the least likely place's slot, each with its
    /// filtering deferred, leave exactly the belief of slots filtered after every change.
    @Test func slotsChangedWithTheirFilteringDeferredCloseToTheSameBelief() {
        func run(deferring: Bool) -> PlaceBelief {
            var belief = PlaceBelief(at: 0, lagSteps: 6)
            for place in Int32(1) ... 7 { _ = belief.claimSlot(for: place, keep: 0, pastLikelihood: 0.5, stay: 0.98) }
            for step in 0 ..< 10 {
                var likelihoods = PlaceBelief.Vector(repeating: 0.3)
                likelihoods[1 + step % 7] = 1
                likelihoods[1] = 0.9
                belief.close(likelihoods, stay: 0.98)
            }
            belief.release(3, stay: 0.98, deferringFilter: deferring)
            _ = belief.claimSlot(for: 8, keep: 1, pastLikelihood: 0.2, stay: 0.98, deferringFilter: deferring)
            _ = belief.claimSlot(for: 9, keep: 1, pastLikelihood: 0.2, stay: 0.98, deferringFilter: deferring)
            var likelihoods = PlaceBelief.Vector(repeating: 0.4)
            likelihoods[2] = 1
            belief.close(likelihoods, stay: 0.98)
            return belief
        }
        let eager = run(deferring: false)
        let deferred = run(deferring: true)
        #expect(eager.places == deferred.places, "the evicted slot: \(eager.places) against \(deferred.places)")
        #expect(eager.latest == deferred.latest, "\(eager.latest) against \(deferred.latest)")
        var smoothedEager: [PlaceBelief.Vector] = []
        var smoothedDeferred: [PlaceBelief.Vector] = []
        eager.smooth(stay: 0.98, into: &smoothedEager)
        deferred.smooth(stay: 0.98, into: &smoothedDeferred)
        #expect(smoothedEager == smoothedDeferred)
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
