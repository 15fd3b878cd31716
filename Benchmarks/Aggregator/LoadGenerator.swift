import Foundation
import Logging
import PresenceCore
import PresenceMQTT
import Synchronization

/// Publishes SightingBatches as real nodes do: every node over its own connection, a batch every
/// 500 ms (or every `batchSize` sightings), QoS 1, one batch in flight per node. The bulk load
/// cycles through each node's (device, rank) links so that every link is heard at the same rate;
/// the crowd and the marker are added on top. With several shards, each node's batch goes in parts,
/// one per shard, as real nodes split it. Payloads are written byte by byte from pre-encoded
/// parts, so that the generator is never the bottleneck (it reports how late it ran). In a foreign
/// dialect (`LoadScenario.Dialect`), every sighting is instead its own QoS 0 message on the foreign
/// node's topic, as ESPresense rooms and OpenMQTTGateway gateways publish.
final class LoadGenerator: Sendable {
    static let interval: Int64 = 500
    let scenario: LoadScenario
    let venue: BenchVenue
    let topics: Topics
    private let clients: [MQTTClient]
    private let counters = Mutex(Counters())

    /// What the generator did.
    struct Counters: Sendable {
        var sightings = 0
        var batches = 0
        /// The most a node's queue of batches waiting for the broker grew, in batches.
        var deepestQueue = 0
        /// The latest an interval's batches were built after their due time, ms.
        var worstLag: Int64 = 0
        /// When the marker moved (its strongest node switched), wall ms.
        var moves: [Int64] = []
        var crowdAppeared: Int64?
        var crowdLastHeard: Int64?
        /// Batches waiting for the broker, by node.
        var queued: [Int] = []
    }

    /// One node's links: the pre-encoded middle of each sighting (`,"id":"…","rssi":`), its RSSI
    /// and the device's shard.
    private struct Link {
        var identity: String
        var middle: [UInt8]
        var rssi: Int
        var shard: Int
    }

    /// One sighting to send.
    private typealias Item = (middle: [UInt8], rssi: Int, shard: Int)

    init(scenario: LoadScenario, brokerURL: MQTTURL, topics: Topics, logger: Logger) throws {
        self.scenario = scenario
        venue = BenchVenue(scenario: scenario)
        self.topics = topics
        let run = UInt32.random(in: .min ... .max)
        clients = try (0 ..< scenario.nodes).map { index in
            var configuration = MQTTConfiguration(url: brokerURL, clientID: "bench-\(run)-\(index)")
            configuration.maxInFlight = 10
            return try MQTTClient(configuration: configuration, logger: logger)
        }
    }

    var snapshot: Counters { counters.withLock { $0 } }

    func connect() async throws {
        for client in clients { try client.start() }
        for client in clients { try await client.waitUntilConnected() }
    }

    func stop() async {
        for client in clients { await client.stop() }
    }

    /// Runs the load for the scenario's duration from `start` (wall ms), then returns once every
    /// batch is acknowledged.
    func run(from start: Int64) async {
        if scenario.dialect != .native {
            await runForeign(from: start)
            return
        }
        let queues = (0 ..< scenario.nodes).map { _ in AsyncStream.makeStream(of: (String, [UInt8]).self) }
        counters.withLock { $0.queued = Array(repeating: 0, count: scenario.nodes) }
        let shards = (try? Shards(count: scenario.shards)) ?? .one
        await withTaskGroup(of: Void.self) { group in
            for (index, client) in clients.enumerated() {
                let stream = queues[index].stream
                group.addTask {
                    for await (topic, payload) in stream {
                        try? await client.publish(MQTTMessage(topic: topic, payload: payload, qos: 1))
                        self.counters.withLock { $0.queued[index] -= 1 }
                    }
                }
            }
            let links = (0 ..< scenario.nodes).map { bulkLinks(of: $0, shards: shards) }
            let crowdMiddles = (0 ..< LoadScenario.crowdSize).map { Self.middle(BenchVenue.crowdDevice($0)) }
            let crowdShards = (0 ..< LoadScenario.crowdSize).map { shards.shard(of: BenchVenue.crowdDevice($0)) }
            let marker = Self.middle(BenchVenue.markerDevice)
            let markerShard = shards.shard(of: BenchVenue.markerDevice)
            var cursors = Array(repeating: 0, count: scenario.nodes)
            var carry = Array(repeating: 0.0, count: scenario.nodes)
            var seq = Array(repeating: Int64(0), count: scenario.nodes)
            var noise = RandomSource(seed: 35)
            await paced(from: start) { due, built, markerAtFirst in
                let crowdOn = scenario.crowd && due >= start + 3_000 && due < start + 10_000
                var sightings = 0
                var batches: [Int] = Array(repeating: 0, count: scenario.nodes)
                for node in 0 ..< scenario.nodes {
                    var items: [Item] = []
                    carry[node] += Double(scenario.rate) * Double(Self.interval) / 1000 / Double(scenario.nodes)
                    let count = Int(carry[node])
                    carry[node] -= Double(count)
                    let nodeLinks = links[node]
                    if !nodeLinks.isEmpty {
                        for step in 0 ..< count {
                            let link = nodeLinks[(cursors[node] + step) % nodeLinks.count]
                            let offset = scenario.rssiNoise > 0 ? Int((noise.gaussian() * scenario.rssiNoise).rounded()) : (step % 5) - 2
                            items.append((link.middle, link.rssi + offset, link.shard))
                        }
                        cursors[node] = (cursors[node] + count) % nodeLinks.count
                    }
                    if crowdOn {
                        for crowd in stride(from: node, to: LoadScenario.crowdSize, by: scenario.nodes) {
                            items.append((crowdMiddles[crowd], -55, crowdShards[crowd]))
                        }
                    }
                    if node < 2 {
                        let near = (node == 0) == markerAtFirst
                        for _ in 0 ..< (seq[node] % 2 == 0 ? 2 : 3) { items.append((marker, near ? -52 : -78, markerShard)) }
                    }
                    var parts: [(topic: String, items: [Item])] = [(topics.sightings(node: BenchVenue.node(node)), items)]
                    if shards.count > 1 {
                        var split = Array(repeating: [Item](), count: shards.count)
                        for item in items { split[item.shard].append(item) }
                        parts = split.indices.filter { !split[$0].isEmpty }.map { (topics.sightings(node: BenchVenue.node(node), shard: $0), split[$0]) }
                    }
                    for (topic, partItems) in parts {
                        for chunk in stride(from: 0, to: partItems.count, by: scenario.batchSize) {
                            seq[node] += 1
                            let part = partItems[chunk ..< min(partItems.count, chunk + scenario.batchSize)]
                            counters.withLock { $0.queued[node] += 1 }
                            queues[node].continuation.yield((topic, Self.payload(node: node, seq: seq[node], sent: built, from: due - Self.interval, part)))
                            batches[node] += 1
                        }
                    }
                    sightings += items.count
                }
                counters.withLock { counters in
                    counters.sightings += sightings
                    counters.batches += batches.reduce(0, +)
                    counters.deepestQueue = max(counters.deepestQueue, counters.queued.max() ?? 0)
                    counters.worstLag = max(counters.worstLag, built - due)
                    if crowdOn {
                        if counters.crowdAppeared == nil { counters.crowdAppeared = due - Self.interval }
                        counters.crowdLastHeard = built
                    }
                }
            }
            for queue in queues { queue.continuation.finish() }
        }
    }

    /// A foreign node's report of one device, but for its RSSI: the topic, and the payload around it.
    private struct ForeignReport {
        var topic: String
        var head: [UInt8]
        var tail: [UInt8]
        var rssi: Int

        func message(rssi: Int) -> MQTTMessage {
            var payload = head
            LoadGenerator.appendDecimal(Int64(rssi), to: &payload)
            payload += tail
            return MQTTMessage(topic: topic, payload: payload, qos: 0)
        }
    }

    /// Where the foreign nodes of `dialect` publish in a run under `topics`.
    static func foreignPrefix(_ dialect: LoadScenario.Dialect, _ topics: Topics) -> String {
        "\(topics.prefix)/\(dialect == .espresense ? "espresense" : "home")"
    }

    /// The report node `node` publishes when it hears `identity` (an iBeacon's), as ESPresense or a
    /// gateway writes it.
    private func foreignReport(node: Int, identity: String, rssi: Int) -> ForeignReport {
        let fields = identity.split(separator: ":")
        let (uuid, major, minor) = (String(fields[1]), String(fields[2]), String(fields[3]))
        let prefix = Self.foreignPrefix(scenario.dialect, topics)
        if scenario.dialect == .espresense {
            let id = "iBeacon:\(uuid)-\(major)-\(minor)"
            return ForeignReport(topic: "\(prefix)/devices/\(id)/\(BenchVenue.node(node))",
                                 head: Array(#"{"mac":"c47c8d6a2b01","id":"\#(id)","idType":1,"rssi@1m":-59,"rssi":"#.utf8),
                                 tail: Array(#","raw":1.02,"distance":1.02,"var":0.01,"int":102}"#.utf8), rssi: rssi)
        }
        return ForeignReport(topic: "\(prefix)/\(BenchVenue.node(node))/BTtoMQTT/C47C8D6A2B01",
                             head: Array(#"{"id":"C4:7C:8D:6A:2B:01","mac_type":1,"rssi":"#.utf8),
                             tail: Array(#","brand":"GENERIC","model":"iBeacon","model_id":"IBEACON","mfid":"4c00","uuid":"\#(uuid.filter { $0 != "-" })","major":\#(major),"minor":\#(minor),"txpower":-59}"#.utf8),
                             rssi: rssi)
    }

    /// The foreign dialects: every sighting is its own QoS 0 message, handed to the node's
    /// connection as it is built (these nodes neither batch nor wait for the broker).
    private func runForeign(from start: Int64) async {
        let reports = (0 ..< scenario.nodes).map { node in
            bulkLinks(of: node, shards: .one).map { foreignReport(node: node, identity: $0.identity, rssi: $0.rssi) }
        }
        let markers = (0 ..< min(2, scenario.nodes)).map { foreignReport(node: $0, identity: BenchVenue.markerDevice, rssi: 0) }
        var cursors = Array(repeating: 0, count: scenario.nodes)
        var carry = Array(repeating: 0.0, count: scenario.nodes)
        var tick = 0
        var failed = 0
        await paced(from: start) { due, built, markerAtFirst in
            tick += 1
            var sightings = 0
            for node in 0 ..< scenario.nodes {
                carry[node] += Double(scenario.rate) * Double(Self.interval) / 1000 / Double(scenario.nodes)
                let count = Int(carry[node])
                carry[node] -= Double(count)
                let nodeReports = reports[node]
                var messages: [MQTTMessage] = []
                if !nodeReports.isEmpty {
                    for step in 0 ..< count {
                        let report = nodeReports[(cursors[node] + step) % nodeReports.count]
                        messages.append(report.message(rssi: report.rssi + (step % 5) - 2))
                    }
                    cursors[node] = (cursors[node] + count) % nodeReports.count
                }
                if node < markers.count {
                    let near = (node == 0) == markerAtFirst
                    for _ in 0 ..< (tick % 2 == 0 ? 2 : 3) { messages.append(markers[node].message(rssi: near ? -52 : -78)) }
                }
                for message in messages {
                    do { try clients[node].publishWithoutAcknowledgement(message) } catch { failed += 1 }
                }
                sightings += messages.count
            }
            let sent = sightings
            counters.withLock { counters in
                counters.sightings += sent
                counters.batches += sent
                counters.worstLag = max(counters.worstLag, built - due)
            }
        }
        if failed > 0 { print("warning: \(failed) foreign reports could not be handed to their connections") }
    }

    /// Calls `body` every `interval` ms from `start` for the scenario's duration, with the
    /// interval's due time, when it was built, and whether the marker is at node 0 (it moves every
    /// 12 s from 8 s in: the first interval to carry a move notes it, dated from its start).
    private func paced(from start: Int64, _ body: (_ due: Int64, _ built: Int64, _ markerAtFirst: Bool) -> Void) async {
        let end = start + Int64(scenario.seconds) * 1000
        var due = start
        var markerAtFirst = true
        var nextMove = start + 8_000
        while due < end {
            let wait = due - WallClock.milliseconds()
            if wait > 0 { try? await Task.sleep(for: .milliseconds(wait)) }
            let built = WallClock.milliseconds()
            if due >= nextMove {
                markerAtFirst.toggle()
                counters.withLock { $0.moves.append(due - Self.interval) }
                nextMove += 12_000
            }
            body(due, built, markerAtFirst)
            due += Self.interval
        }
    }

    /// The bulk links node `node` hears: devices whose home is `rank` nodes before it.
    private func bulkLinks(of node: Int, shards: Shards) -> [Link] {
        var links: [Link] = []
        for rank in 0 ..< scenario.heardBy {
            let home = ((node - rank) % scenario.nodes + scenario.nodes) % scenario.nodes
            for device in stride(from: home, to: scenario.devices, by: scenario.nodes) {
                links.append(Link(identity: BenchVenue.device(device), middle: Self.middle(BenchVenue.device(device)), rssi: rank == 0 ? -55 : -63 - 3 * rank,
                                  shard: shards.shard(of: BenchVenue.device(device))))
            }
        }
        return links
    }

    private static func middle(_ identity: String) -> [UInt8] {
        Array(#","id":"\#(identity)","rssi":"#.utf8)
    }

    /// A batch of `items`, their `ts` spread evenly over the interval that began at `from` (and
    /// ends when the batch is sent, as a node's batch holds what it heard since the last one).
    private static func payload(node: Int, seq: Int64, sent: Int64, from: Int64, _ items: ArraySlice<Item>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + items.count * 80)
        bytes += Array(#"{"v":1,"node":"node-\#(node)","seq":\#(seq),"sent":\#(sent),"sightings":["#.utf8)
        for (offset, item) in items.enumerated() {
            if offset > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += Array(#"{"ts":"#.utf8)
            appendDecimal(from + Int64(offset) * interval / Int64(max(1, items.count)), to: &bytes)
            bytes += item.middle
            appendDecimal(Int64(item.rssi), to: &bytes)
            bytes.append(UInt8(ascii: "}"))
        }
        bytes += Array("]}".utf8)
        return bytes
    }

    static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: [UInt8] = []
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        bytes += digits.reversed()
    }
}
