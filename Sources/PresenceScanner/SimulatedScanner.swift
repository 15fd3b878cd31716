import Logging
import PresenceCore
import ServiceLifecycle

/// Scanner nodes in a simulated venue: the simulator runs in real time and each simulated node
/// batches and publishes what it hears, exactly as a node with a radio would.
public final class SimulatedScanner: Service {
    private let configuration: ScannerConfiguration
    private let scenario: Scenario
    private let nodes: Set<String>
    private let logger: Logger

    /// Simulates `nodes` of `scenario` (every node of it, and every carried scanner, when empty).
    public init(configuration: ScannerConfiguration, scenario: Scenario, nodes: Set<String>, logger: Logger) throws {
        try scenario.validate()
        let known = Set(scenario.nodes.map(\.key)).union(scenario.people.compactMap(\.scanner))
        for node in nodes where !known.contains(node) {
            throw ValueError("node '\(node)' is not in the scenario: expected one of \(known.sorted().joined(separator: ", "))")
        }
        self.configuration = configuration
        self.scenario = scenario
        self.nodes = nodes.isEmpty ? known : nodes
        self.logger = logger
    }

    public func run() async throws {
        let start = WallClock.milliseconds()
        var simulator = try VenueSimulator(scenario: scenario, start: start, nodes: nodes)
        var publishers: [String: NodePublisher] = [:]
        var batchers: [String: SightingBatcher] = [:]
        for node in nodes.sorted() {
            let publisher = try NodePublisher(node: node, configuration: configuration, adapter: "simulated", started: start, logger: logger)
            try publisher.start()
            publishers[node] = publisher
            batchers[node] = SightingBatcher(node: node, interval: configuration.batchInterval, maximumSightings: configuration.batchSize)
        }
        logger.notice("simulating", metadata: ["venue": "\(scenario.venue)", "nodes": "\(nodes.sorted().joined(separator: ","))",
                                               "people": "\(scenario.people.count)"])
        await withTaskGroup(of: Void.self) { group in
            for publisher in publishers.values {
                group.addTask { await publisher.run() }
            }
            var sightings: [String: Int] = [:]
            var recent: [String: Int] = [:]
            var statsAt = start
            while !Task.isCancelledOrShuttingDown {
                do {
                    try await Task.sleep(for: .milliseconds(100))
                } catch {
                    break
                }
                let now = WallClock.milliseconds()
                for heard in simulator.advance(to: now) {
                    sightings[heard.node, default: 0] += 1
                    recent[heard.node, default: 0] += 1
                    if let batch = batchers[heard.node]?.add(heard.sighting, at: now) { publishers[heard.node]?.submit(batch) }
                }
                if now - statsAt >= configuration.statsInterval {
                    let seconds = Double(now - statsAt) / 1000
                    statsAt = now
                    for (node, publisher) in publishers {
                        let stats = NodeStatistics(node: node, uptime: now - start, reportsPerSecond: Double(recent[node] ?? 0) / seconds,
                                                   sightings: sightings[node] ?? 0, kinds: ["simulated": sightings[node] ?? 0])
                        group.addTask { await publisher.publishStats(stats) }
                    }
                    recent.removeAll()
                }
                for node in batchers.keys {
                    if let batch = batchers[node]?.due(at: now) { publishers[node]?.submit(batch) }
                }
            }
            let now = WallClock.milliseconds()
            for node in batchers.keys {
                if let batch = batchers[node]?.drain(at: now) { publishers[node]?.submit(batch) }
                publishers[node]?.finish()
            }
            await group.waitForAll()
        }
        await Self.stop(publishers.values)
    }

    /// Stops every node's connection at once, each publishing its offline status.
    private static func stop(_ publishers: some Sequence<NodePublisher>) async {
        await withTaskGroup(of: Void.self) { group in
            for publisher in publishers {
                group.addTask { await publisher.stop() }
            }
        }
    }
}

extension Task where Success == Never, Failure == Never {
    /// Whether the current task is cancelled or its service group is shutting down.
    static var isCancelledOrShuttingDown: Bool {
        isCancelled || isShuttingDownGracefully
    }
}
