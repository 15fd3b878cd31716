/// The messages a client receives, in arrival order. One consumer only; it ends after
/// `MQTTClient.stop()` once the messages received before it have been read. Like `AsyncStream`,
/// it also ends for good when a task waiting in `next()` is cancelled.
public struct MQTTMessages: AsyncSequence, Sendable {
    public typealias Element = MQTTMessage
    public typealias Failure = Never

    let stream: AsyncStream<MQTTMessage>
    let gauge: InboxGauge

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), gauge: gauge)
    }

    /// Reads the next message, or nil once the client has stopped and the inbox is empty.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<MQTTMessage>.AsyncIterator
        let gauge: InboxGauge

        public mutating func next() async -> MQTTMessage? {
            taken(await base.next())
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> MQTTMessage? {
            taken(await base.next(isolation: actor))
        }

        private func taken(_ message: MQTTMessage?) -> MQTTMessage? {
            if let message { gauge.release(message.queuedSize) }
            return message
        }
    }
}
