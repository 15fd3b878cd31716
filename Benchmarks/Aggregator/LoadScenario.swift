/// One load the end-to-end benchmark puts through a real broker to a real aggregator.
struct LoadScenario: Sendable {
    var name: String
    /// Scanner nodes, each anchored to its own booth, each publishing over its own connection.
    var nodes: Int
    /// Registered devices heard in the bulk load (each its own user).
    var devices: Int
    /// How many nodes hear each device: its home node strongest, the next ones weaker.
    var heardBy: Int
    /// Bulk sightings per second, all nodes together.
    var rate: Int
    /// A node's batch closes after 500 ms or this many sightings.
    var batchSize: Int = 1_000
    /// How long the load runs, s.
    var seconds: Int
    /// 5,000 more devices appear in the same second, 5 s into the load, and later all leave at
    /// once: the time until their events are published and their sessions stored.
    var crowd = false
    /// The venue's shard count (nodes split their batches by it), and how many aggregators share it.
    var shards = 1
    var aggregators = 1
    /// How the nodes publish: the contract's batches, or one QoS 0 message per sighting as
    /// ESPresense rooms or OpenMQTTGateway / Theengs gateways do.
    var dialect = Dialect.native
    /// Whether the aggregator reaches the broker over TLS (the nodes, the generator and the
    /// watcher stay on plain TCP).
    var tls = false
    /// The standard deviation of random noise on every bulk sighting's RSSI, dB, as real radios
    /// read it (0: the same ±2 dB pattern on every link, which a smoothed reading barely follows).
    var rssiNoise = 0.0

    enum Dialect: String, Sendable {
        case native, espresense, gateway
    }

    /// The name with the layout when it is not one aggregator on one shard.
    var title: String {
        let layout = aggregators == 1 && shards == 1 ? name : "\(name), \(aggregators) aggregator\(aggregators == 1 ? "" : "s") × \(shards) shards"
        return tls ? layout + ", TLS" : layout
    }

    /// Each device's sightings per second at one node that hears it.
    var perLinkRate: Double { Double(rate) / Double(devices * heardBy) }

    static let crowdSize = 5_000

    /// The scenarios of the README's table; `quick` shortens each.
    static func all(quick: Bool) -> [LoadScenario] {
        let seconds = quick ? 30 : 60
        return [
            LoadScenario(name: "50 nodes, 5k devices ×3, 50k/s", nodes: 50, devices: 5_000, heardBy: 3, rate: 50_000, seconds: seconds, crowd: true),
            LoadScenario(name: "50 nodes, 5k devices ×3, 200k/s", nodes: 50, devices: 5_000, heardBy: 3, rate: 200_000, seconds: seconds, crowd: true),
            LoadScenario(name: "50 nodes, 5k devices ×3, 20k/s, RSSI σ 4 dB", nodes: 50, devices: 5_000, heardBy: 3, rate: 20_000, seconds: seconds,
                         rssiNoise: 4),
            LoadScenario(name: "10 nodes, 1k devices ×10 at 5/s, 50k/s", nodes: 10, devices: 1_000, heardBy: 10, rate: 50_000, seconds: seconds),
            LoadScenario(name: "50 nodes, 100k devices ×1, 50k/s", nodes: 50, devices: 100_000, heardBy: 1, rate: 50_000, seconds: seconds),
            LoadScenario(name: "stadium: 50 nodes, 100k devices ×2, 200k/s", nodes: 50, devices: 100_000, heardBy: 2, rate: 200_000, seconds: seconds),
            LoadScenario(name: "ESPresense: 50 rooms, 5k devices ×3, 50k msg/s", nodes: 50, devices: 5_000, heardBy: 3, rate: 50_000, seconds: seconds,
                         dialect: .espresense),
            LoadScenario(name: "OpenMQTTGateway: 50 gateways, 5k devices ×3, 50k msg/s", nodes: 50, devices: 5_000, heardBy: 3, rate: 50_000,
                         seconds: seconds, dialect: .gateway),
        ]
    }
}
