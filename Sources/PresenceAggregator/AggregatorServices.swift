import Logging
import ServiceLifecycle

/// The aggregator's long-running parts, in the order they start; a `ServiceGroup` stops them in
/// the reverse order: the inbound connection first (no more input), then the decision loop
/// (which decides what came before and hands over its last records), the registry watcher, and
/// the outbox last (which records and publishes what it was handed).
public enum AggregatorServices {
    public static func make(_ configuration: AggregatorConfiguration, logger: Logger) throws -> [any Service] {
        let inbox = LoopInbox(limit: configuration.inboundBytes)
        let ready = StartGate()
        let subscribed = StartGate()
        let outbox = try Outbox(configuration: configuration, subscribed: subscribed, logger: logger)
        let inbound = try InboundConnection(configuration: configuration, inbox: inbox, ready: ready, subscribed: subscribed, logger: logger)
        let loop = DecisionLoop(configuration: configuration, inbox: inbox, outbox: outbox, ready: ready,
                                inboundStatistics: { inbound.statistics }, logger: logger)
        let registry = RegistryWatcher(configuration: configuration, inbox: inbox, logger: logger)
        return [outbox, registry, loop, inbound]
    }
}
