import PresenceCore

/// Turns a simulated venue into a run: the simulator's sightings become observations through the
/// registry, exactly as the aggregator matches them, and the truth is read every 100 ms (the
/// beacon a person dwells at; walking and away are nowhere).
enum SimulatedRecording {
    /// The epoch time the simulations start at (2025-11-22 00:00 UTC).
    static let epoch: Int64 = 1_763_769_600_000

    /// The run of `scenario`; `offsets` are the nodes' registered RSSI offsets (dB, by node key).
    static func run(_ scenario: Scenario, name: String, duration: Int64, offsets: [String: Double] = [:]) throws -> BenchRun {
        var simulator = try VenueSimulator(scenario: scenario, start: epoch)
        var registry = registry(of: scenario)
        for (key, offset) in offsets {
            registry.nodes[key]?.rssiOffset = offset
        }
        var matcher = ObservationMatcher(registry: registry)
        var truth: [String: StepTimeline<TruthState>] = [:]
        var nearest: [String: StepTimeline<TruthState>] = [:]
        for person in scenario.people {
            truth[person.user] = StepTimeline(initial: .nowhere)
            nearest[person.user] = StepTimeline(initial: .nowhere)
        }
        var observations: [Observation] = []
        let end = epoch + duration
        var time = epoch
        while time <= end {
            let places = simulator.truth(at: time)
            for person in scenario.people {
                let place = places[person.user] ?? nil
                truth[person.user]?.set(place.map { .at($0) } ?? .nowhere, at: time)
            }
            for (user, beacon) in simulator.nearestBeacons(at: time) { nearest[user]?.set(beacon.map { .at($0) } ?? .nowhere, at: time) }
            if time % 1_000 == 0 {
                for heard in simulator.advance(to: time) {
                    if case .success(let observation) = matcher.match(heard.sighting, node: heard.node, time: heard.sighting.ts) {
                        observations.append(observation)
                    }
                }
            }
            time += 100
        }
        for user in truth.keys {
            truth[user]?.set(.unknown, at: end)
            nearest[user]?.set(.unknown, at: end)
        }
        return BenchRun(name: name, observations: observations, truth: truth, nearest: nearest, start: epoch, end: end)
    }

    /// The registry an operator would enter for the scenario: its beacons (with their radio
    /// identities), its nodes anchored to their beacons, and each person's tag, or their carried
    /// scanner registered as a device (`node:<key>`).
    static func registry(of scenario: Scenario) -> Registry {
        var nodes = scenario.nodes.map { Registry.Node(key: $0.key, venue: scenario.venue, beacon: $0.beacon, x: $0.x, y: $0.y) }
        var devices: [Registry.Device] = []
        for person in scenario.people {
            if let device = person.device { devices.append(Registry.Device(identity: device, user: person.user)) }
            if let scanner = person.scanner {
                devices.append(Registry.Device(identity: "node:\(scanner)", user: person.user))
                nodes.append(Registry.Node(key: scanner, venue: scenario.venue))
            }
        }
        return Registry(
            venues: [Registry.Venue(key: scenario.venue)],
            beacons: scenario.beacons.map { Registry.Beacon(key: $0.key, venue: scenario.venue, identity: $0.identity, x: $0.x, y: $0.y) },
            nodes: nodes,
            users: scenario.people.map { Registry.User(key: $0.user) },
            devices: devices)
    }
}
