import PresenceCore
import PresenceMQTT
import ServiceLifecycle

/// Runs an MQTT client and hands each message it receives to `handle`, until shut down or, with
/// a `limit` (ms), that long after the start: what `record` and `tail` share.
struct SubscriptionService: Service {
    let client: MQTTClient
    let limit: Int64?
    /// Called once the subscriptions are in place.
    var listening: @Sendable () -> Void = {}
    let handle: @Sendable (MQTTMessage) -> Void

    func run() async throws {
        try client.start()
        let deadline = limit.map { WallClock.milliseconds() + $0 }
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [client, listening] in
                    if (try? await client.waitUntilConnected()) != nil { listening() }
                }
                if let deadline {
                    group.addTask { [client] in
                        try? await Task.sleep(for: .milliseconds(max(0, deadline - WallClock.milliseconds())))
                        await client.stop()
                    }
                }
                for await message in client.messages { handle(message) }
                group.cancelAll()
            }
        } onGracefulShutdown: { [client] in
            Task { await client.stop() }
        }
        await client.stop()
    }
}
