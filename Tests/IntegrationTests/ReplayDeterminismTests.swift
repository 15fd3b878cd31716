import Foundation
import PresenceCore
import Testing

/// `presencectl replay` prints the same bytes in every process. Swift seeds its hashing per
/// process, so anything that follows a dictionary's or a set's order differs between two runs of
/// the executable, though never between two runs inside one test process.
@Suite struct ReplayDeterminismTests {
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    static let start: Int64 = 1_763_774_700_000
    static let booths = 1 ... 4

    /// Who is where: pairs of tag carriers walk together (their readings are the same, so their
    /// decisions fall on the same ticks), and gus carries a scanner that hears the booths'
    /// beacons. Each stop is (booth, from, until), seconds.
    static let walks: [(users: [String], stops: [(booth: Int, from: Int64, until: Int64)])] = [
        (["ana", "ben"], [(1, 0, 20), (2, 20, 40)]),
        (["cy", "dee"], [(2, 5, 30), (3, 30, 60)]),
        (["eve", "finn"], [(4, 0, 25), (3, 25, 50), (1, 50, 70)]),
        (["gus"], [(3, 10, 45), (4, 45, 80)]),
    ]

    static func tag(_ user: String) -> String {
        "ibeacon:\(uuid):9:\((walks.flatMap(\.users).firstIndex(of: user) ?? 0) + 1)"
    }

    /// Venue expo, booths 1-4 (each with a beacon identity and an anchored node, 7 m apart), the
    /// tag carriers' tags, and gus's scanner registered as a device.
    static func register(_ h: PipelineHarness) async throws {
        try await h.ctlOKAsync("migrate")
        try await h.ctlOKAsync("venue", "add", "expo")
        for booth in booths {
            let x = "\((booth - 1) * 7)"
            try await h.ctlOKAsync("beacon", "add", "booth-\(booth)", "--venue", "expo", "--id", "ibeacon:\(uuid):1:\(booth)", "--x", x, "--y", "0")
            try await h.ctlOKAsync("node", "add", "node-\(booth)", "--venue", "expo", "--beacon", "booth-\(booth)", "--x", x, "--y", "0")
        }
        for user in walks.flatMap(\.users) {
            try await h.ctlOKAsync("user", "add", user)
            try await h.ctlOKAsync("device", "add", user == "gus" ? "node:badge-1" : tag(user), "--user", user)
        }
    }

    /// A `presencectl record` file of the walks: every 500 ms each node's batch of the tags it
    /// hears (-55 dBm at its booth, weaker with each booth between), gus's badge's batch of the
    /// beacons it hears, the nodes' stats every 5 s, and node-3 offline from 60 s to 75 s.
    static func recording() throws -> [UInt8] {
        let topics = try Topics()
        var lines: [(received: Int64, line: [UInt8])] = []
        func add(_ topic: String, _ payload: [UInt8], at received: Int64) {
            if let line = Recording.line(payload: payload, topic: topic, received: received) { lines.append((received, line)) }
        }
        for (step, t) in stride(from: start, to: start + 90_000, by: 500).enumerated() {
            let second = (t - start) / 1_000
            var heard: [String: [Sighting]] = [:]
            for (index, walk) in walks.enumerated() {
                guard let booth = walk.stops.first(where: { ($0.from ..< $0.until).contains(second) })?.booth else { continue }
                var noise = RandomSource(seed: UInt64(index * 100_000 + step))
                for node in booths {
                    let rssi = (node == booth ? -55 : -72 - 3 * abs(node - booth)) + Int((noise.gaussian() * 2).rounded())
                    if walk.users == ["gus"] {
                        heard["badge-1", default: []].append(Sighting(ts: t, id: "ibeacon:\(uuid):1:\(node)", rssi: rssi, tx: -59))
                    } else {
                        for user in walk.users { heard["node-\(node)", default: []].append(Sighting(ts: t, id: tag(user), rssi: rssi, tx: -59)) }
                    }
                }
            }
            for (offset, node) in (booths.map { "node-\($0)" } + ["badge-1"]).enumerated() {
                if node == "node-3", (60 ..< 75).contains(second) { continue }
                let batch = SightingBatch(node: node, seq: Int64(step), sent: t, sightings: heard[node] ?? [])
                add(topics.sightings(node: node), batch.encoded(), at: t + 20 + Int64(offset) * 7)
                if (t - start) % 5_000 == 0 { add(topics.nodeStats(node: node), Array(#"{"v":1}"#.utf8), at: t + 60) }
            }
        }
        add(topics.nodeStatus(node: "node-3"), Array(#"{"v":1,"state":"offline"}"#.utf8), at: start + 60_040)
        add(topics.nodeStatus(node: "node-3"), Array(#"{"v":1,"state":"online"}"#.utf8), at: start + 75_040)
        return lines.sorted { $0.received < $1.received }.flatMap { $0.line + [0x0A] }
    }

    @Test func replayPrintsTheSameBytesInEveryProcess() async throws {
        let h = try PipelineHarness("replay")
        try await Self.register(h)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("replay-\(h.prefix).jsonl")
        try Data(Self.recording()).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let first = try await h.ctlAsync("replay", file.path)
        let second = try await h.ctlAsync("replay", file.path)
        #expect(first.status == 0 && second.status == 0, "\(first.stderr)\(second.stderr)")
        let lines = first.stdout.split(separator: "\n")
        let events = lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
        // Enough for an order to show: everyone's events, and several users' at one moment.
        #expect(Set(events.compactMap { $0["user"] as? String }) == Set(Self.walks.flatMap(\.users)))
        let moments = events.map { "\($0["event"] ?? "") \($0["beacon"] ?? "") \($0["at"] ?? "")" }
        #expect(Set(moments).count < moments.count, "no two users decided at one moment")
        let again = second.stdout.split(separator: "\n")
        let difference = zip(lines, again).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(lines.count, again.count)
        #expect(first.stdout == second.stdout, "the outputs differ from line \(difference + 1)")
    }
}
