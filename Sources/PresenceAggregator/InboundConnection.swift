import Logging
import PresenceCore
import PresenceMQTT
import ServiceLifecycle

/// The connection that receives sightings and node messages, in a persistent broker session (so
/// that the broker keeps them while the aggregator is down), straight into the decision loop's
/// inbox. It connects once the loop is ready, says when its subscriptions are in place (only then
/// does the aggregator call itself online), and is the first part to stop on shutdown, so that the
/// loop can decide everything received before it ends.
final class InboundConnection: Service {
    private let client: MQTTClient
    private let inbox: LoopInbox
    private let ready: StartGate
    private let health: AggregatorHealth
    private let logger: Logger

    init(configuration: AggregatorConfiguration, inbox: LoopInbox, ready: StartGate, health: AggregatorHealth, logger: Logger) throws {
        let topics = configuration.topics
        var mqtt = MQTTConfiguration(broker: configuration.broker, clientID: configuration.effectiveClientID)
        mqtt.cleanSession = configuration.cleanSession
        // A persistent session needs, under MQTT 5, a session-expiry CONNECT property, which
        // libmosquitto's automatic reconnects do not send; under 3.1.1 the broker keeps a session
        // without clean-session for as long as it is configured to.
        if !configuration.cleanSession { mqtt.protocolVersion = .v311 }
        // Every shard's batches (`…/{node}/{shard}`) and unsharded ones: this aggregator decides for them all.
        mqtt.subscriptions = [MQTTSubscription(topics.allSightings, qos: 1), MQTTSubscription(topics.allShardedSightings, qos: 1),
                              MQTTSubscription(topics.allNodeStatuses, qos: 1), MQTTSubscription(topics.allNodeStats, qos: 0)]
        mqtt.onMessage = { message in
            // Said at the 1st, 10th, 100th... drop: a flood cannot flood the log.
            guard let dropped = inbox.push(message, receivedAt: WallClock.milliseconds()), String(dropped).dropFirst().allSatisfy({ $0 == "0" }) else {
                return
            }
            logger.warning("no room for inbound messages in the decision loop's inbox; dropping them", metadata: ["dropped": "\(dropped)"])
        }
        mqtt.reconnectDelayMax = 5
        client = try MQTTClient(configuration: mqtt, logger: logger)
        self.inbox = inbox
        self.ready = ready
        self.health = health
        self.logger = logger
    }

    /// Whether the connection is up.
    var isConnected: Bool { client.isConnected }

    func run() async throws {
        defer { inbox.finish() }
        await withTaskCancellationOrGracefulShutdownHandler { [ready] in
            await ready.wait()
        } onCancelOrGracefulShutdown: { [ready] in
            ready.open()
        }
        guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
        try client.start()
        do {
            try await cancelWhenGracefulShutdown { [client] in try await client.waitUntilConnected() }
            health.subscribed()
        } catch {
            logger.debug("stopped before the subscriptions were in place", metadata: ["error": "\(error)"])
        }
        try? await gracefulShutdown()
        await client.stop()
    }
}
