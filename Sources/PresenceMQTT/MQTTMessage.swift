/// One MQTT application message, inbound or outbound. The payload is copied bytes.
public struct MQTTMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    /// 0, 1 or 2. QoS 2 is handled like QoS 1 by `MQTTClient.publish` (it returns at PUBCOMP).
    public var qos: Int
    public var retain: Bool

    /// What the message costs waiting in a queue, bytes: its payload, its topic and 64 more.
    public var queuedSize: Int {
        payload.count + topic.utf8.count + 64
    }

    public init(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}
