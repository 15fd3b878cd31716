import PresenceCore
import Testing

/// The one retry policy of every connection owner: the first wait, doubled each time, up to the
/// longest, and the count started again once a connection held.
@Suite struct RetryPolicyTests {
    @Test func thePolicyDoublesUpToItsLongestWait() {
        let policy = RetryPolicy(first: .seconds(1), longest: .seconds(8))
        #expect((1 ... 6).map { policy.delay(after: $0) } == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8), .seconds(8)])
        #expect(policy.delay(after: 1_000) == .seconds(8))
    }

    @Test func aLongestBelowTheFirstIsTheFirst() {
        #expect(RetryPolicy(first: .seconds(2), longest: .seconds(1)).delay(after: 5) == .seconds(2))
        #expect(RetryPolicy().delay(after: 0) == .seconds(1) && RetryPolicy().delay(after: -3) == .seconds(1))
    }

    @Test func aConnectionThatHeldStartsTheCountAgainAndOneThatFlappedDoesNot() {
        var attempts = RetryPolicy.Attempts(RetryPolicy(first: .milliseconds(500), longest: .seconds(4)))
        #expect([attempts.failed(), attempts.failed(), attempts.failed()] == [.milliseconds(500), .seconds(1), .seconds(2)])
        #expect(attempts.failed(held: .seconds(1)) == .seconds(4), "up for 1 s, under the longest wait: it did not hold")
        #expect(attempts.failed(held: .seconds(4)) == .milliseconds(500), "up for the longest wait: it held")
        #expect(attempts.failures == 1)
        for _ in 0 ..< 5_000 { _ = attempts.failed() }
        #expect(attempts.failures == 1_000 && attempts.failed() == .seconds(4))
    }
}
