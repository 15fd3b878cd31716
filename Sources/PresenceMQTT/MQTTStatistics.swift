/// Counters of one `MQTTClient` since it was created.
public struct MQTTStatistics: Sendable, Equatable {
    /// Messages the broker delivered to this client, including those dropped below.
    public var received = 0
    /// Inbound messages dropped because the inbox had no room for them (`inboxBytes`).
    public var droppedInbound = 0
    /// Their bytes, as the inbox counts them.
    public var droppedInboundBytes = 0
    /// Bytes of received messages not read yet.
    public var inboxBytes = 0
    /// Messages sent through `publish(_:)`: QoS 0 when handed to the library, QoS 1 and 2 when acknowledged.
    public var published = 0
    /// Successful connections (CONNACK accepted), the first one included.
    public var connects = 0
    /// Losses of an established connection, and the final clean disconnect.
    public var disconnects = 0
    /// QoS 1 and 2 messages handed to libmosquitto and not yet acknowledged (at most `maxInFlight`).
    public var inFlight = 0
    /// The largest `inFlight` seen.
    public var peakInFlight = 0

    public init() {}
}
