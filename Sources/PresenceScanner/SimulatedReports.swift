import Logging
import PresenceCore
import ServiceLifecycle

/// The reports of scanner nodes in a simulated venue: the simulator runs in real time, from when
/// this is made, in steps of 100 ms, each handing on what every node heard since the last.
/// Ends on graceful shutdown.
public struct SimulatedReports: ReportSource {
    public let nodes: [String]
    public let adapter = "simulated"
    public let form = ReportForm.simulated
    private let simulator: VenueSimulator

    /// Simulates `nodes` of `scenario` (every node of it, and every carried scanner, when empty).
    public init(scenario: Scenario, nodes: Set<String>, logger: Logger) throws {
        try scenario.validate()
        let known = Set(scenario.nodes.map(\.key)).union(scenario.people.compactMap(\.scanner))
        for node in nodes where !known.contains(node) {
            throw ValueError("node '\(node)' is not in the scenario: expected one of \(known.sorted().joined(separator: ", "))")
        }
        let chosen = nodes.isEmpty ? known : nodes
        self.nodes = chosen.sorted()
        simulator = try VenueSimulator(scenario: scenario, start: WallClock.milliseconds(), nodes: chosen)
        logger.notice("simulating", metadata: ["venue": "\(scenario.venue)", "nodes": "\(self.nodes.joined(separator: ","))",
                                               "people": "\(scenario.people.count)"])
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(simulator: simulator)
    }

    public struct Iterator: AsyncIteratorProtocol {
        var simulator: VenueSimulator

        public mutating func next() async -> TimedReport? {
            guard !Task.isShuttingDownGracefully, (try? await Task.sleep(for: .milliseconds(100))) != nil else { return nil }
            return .sightings(simulator.advance(to: WallClock.milliseconds()))
        }
    }
}
