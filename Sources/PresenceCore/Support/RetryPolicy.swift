/// How long a connection owner waits before trying again after the `attempt`-th failure in a row:
/// the first wait, doubled each time, up to the longest. The one policy of every connection the
/// programs keep: the database client's connections and listeners (and its users' retries of work
/// the server refused for now), the inbound MQTT connections, and libmosquitto's reconnects.
public struct RetryPolicy: Sendable, Equatable {
    public var first: Duration
    public var longest: Duration

    /// 1 s doubling to 8 s: back soon after an outage, a few attempts a minute while it lasts.
    public init(first: Duration = .seconds(1), longest: Duration = .seconds(8)) {
        self.first = first
        self.longest = max(first, longest)
    }

    /// The wait after `attempt` failures in a row (1 for the first).
    public func delay(after attempt: Int) -> Duration {
        var delay = first
        for _ in 1 ..< max(1, min(attempt, 32)) where delay < longest { delay *= 2 }
        return min(delay, longest)
    }

    /// The failures in a row of one connection owner. A connection that held (stayed up for the
    /// policy's longest wait) starts the count again, so that a venue's broker restarted once a
    /// week is retried after the first wait, not the longest.
    public struct Attempts: Sendable, Equatable {
        public let policy: RetryPolicy
        public private(set) var failures = 0

        public init(_ policy: RetryPolicy) {
            self.policy = policy
        }

        /// A connection attempt failed, or a connection that was up for `held` (nil: it never came
        /// up) was lost: the wait before the next attempt.
        public mutating func failed(held: Duration? = nil) -> Duration {
            if let held, held >= policy.longest { failures = 0 }
            failures = min(failures + 1, 1_000)
            return policy.delay(after: failures)
        }
    }
}
