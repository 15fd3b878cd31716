/// How long to wait before trying the database again after the `attempt`-th failure in a row: the
/// first wait, doubled each time, up to the longest. One policy serves every connection of a
/// `PostgresClient`, its listeners, and its users' own retries of work the server refused for now.
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
}
