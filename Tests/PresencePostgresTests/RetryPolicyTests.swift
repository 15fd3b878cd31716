import PresencePostgres
import Testing

/// The one retry policy of the database client: the first wait, doubled each time, up to the longest.
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
}
