/// The messages of one read of an `MQTTInboundConnection`, in one buffer: each message's topic and
/// payload lie one after the other in `bytes`, so that a read of fifty messages costs two
/// allocations rather than a hundred, and is queued and taken as one item.
public struct MQTTMessageBlock: Sendable {
    private var bytes: [UInt8] = []
    /// For each message, where its topic ends and where its payload ends (its topic starts where
    /// the one before ends).
    private var ends: [(topic: Int, payload: Int)] = []

    /// None yet.
    public init() {}

    /// Messages, in order.
    public init(_ messages: [MQTTMessage]) {
        for message in messages { append(topic: Array(message.topic.utf8), payload: message.payload) }
    }

    public var count: Int { ends.count }
    public var isEmpty: Bool { ends.isEmpty }

    /// What the messages cost waiting in a queue, bytes: as `MQTTMessage.queuedSize` adds up.
    public var queuedSize: Int { bytes.count + 64 * ends.count }

    /// Adds a message of `topic` (UTF-8) and `payload`.
    public mutating func append(topic: some Collection<UInt8>, payload: some Collection<UInt8>) {
        bytes.append(contentsOf: topic)
        let topicEnd = bytes.count
        bytes.append(contentsOf: payload)
        ends.append((topicEnd, bytes.count))
    }

    /// Calls `body` with each message's topic and payload bytes, in order; they are valid only
    /// during the call.
    public func forEach(_ body: (_ topic: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer) throws -> Void) rethrows {
        try bytes.withUnsafeBytes { all in
            var start = 0
            for end in ends {
                try body(UnsafeRawBufferPointer(rebasing: all[start ..< end.topic]), UnsafeRawBufferPointer(rebasing: all[end.topic ..< end.payload]))
                start = end.payload
            }
        }
    }

    /// The messages, each as an `MQTTMessage` (QoS 0, as the inbound connection reads them).
    public var messages: [MQTTMessage] {
        var messages: [MQTTMessage] = []
        messages.reserveCapacity(count)
        forEach { topic, payload in messages.append(MQTTMessage(topic: String(decoding: topic, as: UTF8.self), payload: Array(payload), qos: 0)) }
        return messages
    }
}
