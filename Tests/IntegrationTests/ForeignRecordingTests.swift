import Foundation
import PresenceCore
import PresenceMQTT
import Testing

/// `presencectl record` and `replay` with the aggregator's foreign-node flags: what ESPresense rooms
/// published is recorded, their status as text lines, and a replay decides the same walk as the
/// same sightings sent as SightingBatches.
@Suite struct ForeignRecordingTests {
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    static let start: Int64 = 1_763_774_700_000

    /// Booths a and b, each with the room (node) that stands at it; ann carries an iBeacon.
    static func register(_ h: PipelineHarness) async throws {
        try await h.ctlOKAsync("migrate")
        try await h.ctlOKAsync("venue", "add", "expo")
        for (index, booth) in ["a", "b"].enumerated() {
            let x = "\(index * 8)"
            try await h.ctlOKAsync("beacon", "add", "booth-\(booth)", "--venue", "expo", "--id", "ibeacon:\(uuid):1:\(index + 1)", "--x", x, "--y", "0")
            try await h.ctlOKAsync("node", "add", "room-\(booth)", "--venue", "expo", "--beacon", "booth-\(booth)", "--x", x, "--y", "0")
        }
        try await h.ctlOKAsync("user", "add", "ann")
        try await h.ctlOKAsync("device", "add", "ibeacon:\(uuid):9:1", "--user", "ann")
    }

    /// Ann at booth a for 20 s, then at b for 20 s, then gone; both rooms report her every 500 ms,
    /// as ESPresense reports or as SightingBatches dated at their arrival. Room-b falls silent at
    /// 30 s, saying first that it is offline with `status` (its readings are then held, not aged).
    static func recording(h: PipelineHarness, foreign: Bool, status: Bool = true) -> [UInt8] {
        var lines: [UInt8] = []
        func add(_ topic: String, _ payload: [UInt8], at received: Int64) {
            guard let line = Recording.line(payload: payload, topic: topic, received: received) else { return }
            lines += line + [0x0A]
        }
        var random = RandomSource(seed: 11)
        for (step, t) in stride(from: start, to: start + 40_000, by: 500).enumerated() {
            for (index, room) in ["room-a", "room-b"].enumerated() {
                if room == "room-b", t >= start + 30_000 { continue }
                let near = (index == 0) == (t < start + 20_000)
                let rssi = (near ? -57 : -75) + Int((random.gaussian() * 2).rounded())
                let received = t + Int64(index) * 9
                if foreign {
                    add("\(h.prefix)/espresense/devices/iBeacon:\(uuid)-9-1/\(room)",
                        Array(#"{"id":"iBeacon:\#(uuid)-9-1","idType":1,"rssi@1m":-59,"rssi":\#(rssi),"raw":nan,"distance":nan}"#.utf8), at: received)
                } else {
                    let batch = SightingBatch(node: room, seq: Int64(step), sent: received, sightings: [Sighting(ts: received, id: "ibeacon:\(uuid):9:1", rssi: rssi, tx: -59)])
                    add(h.topics.sightings(node: room), batch.encoded(), at: received)
                }
            }
            if status, t == start + 30_000 {
                if foreign {
                    add("\(h.prefix)/espresense/rooms/room-b/status", Array("offline".utf8), at: t + 3)
                } else {
                    add(h.topics.nodeStatus(node: "room-b"), Array(#"{"v":1,"state":"offline"}"#.utf8), at: t + 3)
                }
            }
        }
        return lines
    }

    static func events(_ stdout: String) -> [String] {
        stdout.split(separator: "\n").compactMap { line -> String? in
            guard let event = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else { return nil }
            return "\(event["event"] ?? "") \(event["beacon"] ?? "") \(event["user"] ?? "") \(event["at"] ?? "") \(event["reason"] ?? "-")"
        }
    }

    @Test func aRecordedForeignWalkReplaysAsTheSameWalkInBatches() async throws {
        let h = try PipelineHarness("foreign-replay")
        try await Self.register(h)
        var files: [String: URL] = [:]
        for (name, foreign, status) in [("native", false, true), ("foreign", true, true), ("unsaid", true, false)] {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(h.prefix).jsonl")
            try Data(Self.recording(h: h, foreign: foreign, status: status)).write(to: file)
            files[name] = file
        }
        defer { for file in files.values { try? FileManager.default.removeItem(at: file) } }
        let native = try await h.ctlAsync("replay", files["native"]?.path ?? "")
        let foreign = try await h.ctlAsync("replay", "--espresense", "\(h.prefix)/espresense", files["foreign"]?.path ?? "")
        #expect(native.status == 0 && foreign.status == 0, "\(native.stderr)\(foreign.stderr)")
        #expect(Self.events(native.stdout).map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
            == ["enter booth-a", "exit booth-a", "enter booth-b"])
        #expect(Self.events(foreign.stdout) == Self.events(native.stdout))
        #expect(!foreign.stderr.contains("skipped"), "\(foreign.stderr)")
        // Room-b's status, a text line, counts: it holds ann's stay at booth-b while the room is
        // down; without it, the room's silence ends the stay.
        let unsaid = try await h.ctlAsync("replay", "--espresense", "\(h.prefix)/espresense", files["unsaid"]?.path ?? "")
        #expect(unsaid.status == 0 && Self.events(unsaid.stdout).contains { $0.hasPrefix("exit booth-b") }, "\(Self.events(unsaid.stdout))")
        // Without the flag, the foreign lines are not the aggregator's and decide nothing.
        let unflagged = try await h.ctlAsync("replay", files["foreign"]?.path ?? "")
        #expect(unflagged.status == 0 && Self.events(unflagged.stdout).isEmpty && unflagged.stderr.contains("skipped"), "\(unflagged.stderr)")
    }

    @Test func recordKeepsForeignReportsAndTheirStatusAsText() async throws {
        let h = try PipelineHarness("foreign-record")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("record-\(h.prefix).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        let prefix = "\(h.prefix)/espresense"
        let recorder = try ChildProcess.spawn(try PackagePaths.executable("presencectl"), ["record", "--espresense", prefix, "--out", file.path],
                                              environment: h.environment)
        let publisher = try await h.publisher()
        let device = "irk:00112233445566778899aabbccddeeff"
        // QoS 0 messages sent before the recorder subscribed are lost: sent again until recorded.
        try await eventuallyAsync(30, "the recorder to keep a report and a status") {
            try publisher.publishWithoutAcknowledgement(MQTTMessage(topic: "\(prefix)/devices/\(device)/hall",
                                                                    payload: Array(#"{"id":"\#(device)","rssi":-61,"distance":nan}"#.utf8), qos: 0))
            try publisher.publishWithoutAcknowledgement(MQTTMessage(topic: "\(prefix)/rooms/hall/status", payload: Array("offline".utf8), qos: 0))
            try publisher.publishWithoutAcknowledgement(MQTTMessage(topic: "\(prefix)/rooms/hall/telemetry", payload: Array(#"{"ip":"x"}"#.utf8), qos: 0))
            try await Task.sleep(for: .milliseconds(300))
            let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            return text.contains(#""text":"offline""#) && text.contains(#""id":"\#(device)""#)
        }
        #expect(await recorder.stop() == 0, "\(recorder.stderr)")
        await publisher.stop()
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init)
        let reports = lines.filter { $0.contains(#""topic":"\#(prefix)/devices/\#(device)/hall","id":"\#(device)","rssi":-61,"distance":nan}"#) }
        let statuses = lines.filter { $0.hasSuffix(#""topic":"\#(prefix)/rooms/hall/status","text":"offline"}"#) }
        // Every line is one of the two: the telemetry, which the aggregator does not read, is not kept.
        #expect(!reports.isEmpty && !statuses.isEmpty && reports.count + statuses.count == lines.count, "\(lines)")
        #expect(statuses.allSatisfy { Array($0.utf8).withUnsafeBytes { Recording.text(of: $0) } == Array("offline".utf8) })
    }
}
