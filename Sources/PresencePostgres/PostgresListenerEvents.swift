/// What a `PostgresListener` reports.
public enum PostgresListenerEvent: Sendable, Hashable {
    /// The first connection is up and every channel is LISTENed to.
    case listening
    /// A NOTIFY on one of the channels, delivered after its transaction committed.
    case notification(channel: String, payload: String)
    /// The connection was lost and is back with every LISTEN re-issued: notifications sent
    /// in between were missed, so re-read whatever state they describe.
    case reconnected
}

/// The events of one `PostgresListener`, in order, for a single consumer. It ends after `stop()`.
public struct PostgresListenerEvents: AsyncSequence, Sendable {
    public typealias Element = PostgresListenerEvent
    public typealias Failure = Never

    let stream: AsyncStream<PostgresListenerEvent>

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator())
    }

    /// Iterates the events; not shared between tasks.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<PostgresListenerEvent>.Iterator

        public mutating func next() async -> PostgresListenerEvent? {
            await base.next()
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> PostgresListenerEvent? {
            await base.next(isolation: actor)
        }
    }
}
