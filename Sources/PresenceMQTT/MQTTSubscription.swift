/// A topic filter (wildcards `+` and `#` allowed) and the maximum QoS to receive it at.
public struct MQTTSubscription: Sendable, Equatable {
    public var filter: String
    public var qos: Int

    public init(_ filter: String, qos: Int = 1) {
        self.filter = filter
        self.qos = qos
    }
}
