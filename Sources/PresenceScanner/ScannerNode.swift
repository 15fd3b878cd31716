import Logging
import PresenceCore
import ServiceLifecycle

/// A scanner node service: takes the reports of one source (an adapter, a capture, the simulator)
/// and, for every node they name, over the node's own connection, publishes its batches (QoS 1,
/// spooled until acknowledged), its stats every `statsInterval` and its retained status (online;
/// offline when it stops, and by the will when it dies). The decisions are `ScannerCore`'s. It
/// ends once the source has ended and the nodes' batches are published: a capture ends by itself;
/// on graceful shutdown the source stops taking input, and a node whose broker is away is not
/// waited for (its spool keeps the rest).
public final class ScannerNode<Source: ReportSource>: Service {
    private let source: Source
    private let configuration: ScannerConfiguration
    private let logger: Logger

    public init(source: Source, configuration: ScannerConfiguration, logger: Logger) {
        self.source = source
        self.configuration = configuration
        self.logger = logger
    }

    public func run() async throws {
        let started = WallClock.milliseconds()
        let publishers = try source.nodes.map {
            try NodePublisher(node: $0, configuration: configuration, adapter: source.adapter, started: started, logger: logger)
        }
        for publisher in publishers { try publisher.start() }
        let byNode = Dictionary(publishers.map { ($0.node, $0) }, uniquingKeysWith: { first, _ in first })
        var core = ScannerCore(nodes: source.nodes, form: source.form, batchInterval: configuration.batchInterval,
                               batchSize: configuration.batchSize, statsInterval: configuration.statsInterval, started: started)
        var last: [NodeStatistics] = []
        await withTaskGroup(of: Void.self) { group in
            for publisher in publishers {
                group.addTask { await publisher.run() }
            }
            for await report in source {
                Self.publish(core.take(report, at: WallClock.milliseconds()), to: byNode)
            }
            let output = core.finish(at: WallClock.milliseconds())
            Self.publish(output, to: byNode)
            last = output.statistics
            for publisher in publishers { publisher.finish() }
        }
        await withTaskGroup(of: Void.self) { group in
            for publisher in publishers {
                group.addTask { await publisher.stop() }
            }
        }
        for stats in last {
            guard let counted = byNode[stats.node]?.counted(stats) else { continue }
            logger.notice("node stopped", metadata: ["node": "\(counted.node)", "sightings": "\(counted.sightings)", "published": "\(counted.published)",
                                                     "dropped": "\(counted.dropped)", "spooled": "\(counted.spooled)"])
        }
    }

    private static func publish(_ output: ScannerCore.Output, to publishers: [String: NodePublisher]) {
        for batch in output.batches { publishers[batch.node]?.submit(batch) }
        for stats in output.statistics { publishers[stats.node]?.publishStats(stats) }
    }
}
