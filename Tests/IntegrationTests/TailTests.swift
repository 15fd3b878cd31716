import Foundation
import PresenceCore
import PresenceMQTT
import Testing

/// `presencectl tail`: the events the aggregator publishes, one readable line each, filtered by
/// user or beacon, or as published with `--json`.
@Suite struct TailTests {
    @Test func eventsArePrintedReadablyAndFiltered() async throws {
        let h = try PipelineHarness("tail")
        let all = try ChildProcess.spawn(try PackagePaths.executable("presencectl"), ["tail"], environment: h.environment)
        let alice = try ChildProcess.spawn(try PackagePaths.executable("presencectl"), ["tail", "--user", "alice", "--json"],
                                           environment: h.environment)
        try await eventually(20, "both tails to listen") { all.stderr.contains("listening") && alice.stderr.contains("listening") }
        let publisher = try await h.publisher()
        let enter = #"{"v":1,"event":"enter","id":"1","user":"alice","device":"x","beacon":"booth-a","venue":"expo","at":1763774735050,"rssi":-61.5,"distance":1.84,"proximity":"near"}"#
        let exit = #"{"v":1,"event":"exit","id":"2","user":"bob","device":"y","beacon":"booth-b","venue":"expo","at":1763774790000,"entered":1763774735050,"dwell":54.95,"reason":"moved"}"#
        try await publisher.publish(MQTTMessage(topic: h.topics.event(beacon: "booth-a", user: "alice"), payload: Array(enter.utf8)))
        try await publisher.publish(MQTTMessage(topic: h.topics.event(beacon: "booth-b", user: "bob"), payload: Array(exit.utf8)))
        try await publisher.publish(MQTTMessage(topic: h.topics.event(beacon: "booth-b", user: "carol"), payload: Array("not json".utf8)))
        try await eventually(15, "both tails to print") { all.stdout.split(separator: "\n").count >= 2 && !alice.stdout.isEmpty }
        try await Task.sleep(for: .milliseconds(500))
        _ = await all.stop()
        _ = await alice.stop()
        #expect(all.stdout.split(separator: "\n") == [
            "2025-11-22T01:25:35.050Z  enter  alice  at booth-a  (near, 1.8 m)",
            "2025-11-22T01:26:30.000Z  exit   bob  from booth-b  (moved, 55 s there)",
        ])
        #expect(alice.stdout.split(separator: "\n") == [Substring(enter)])
        await publisher.stop()
    }

    @Test func zonesEventsArePrintedBesideTheBeaconsOrAlone() async throws {
        let h = try PipelineHarness("tail-zones")
        let both = try ChildProcess.spawn(try PackagePaths.executable("presencectl"), ["tail", "--zones"], environment: h.environment)
        let hall = try ChildProcess.spawn(try PackagePaths.executable("presencectl"), ["tail", "--zone", "hall-b"], environment: h.environment)
        try await eventually(20, "both tails to listen") { both.stderr.contains("listening") && hall.stderr.contains("listening") }
        let publisher = try await h.publisher()
        let enter = #"{"v":1,"event":"enter","id":"1","user":"alice","device":"x","beacon":"booth-a","venue":"expo","at":1763774735050,"rssi":-61.5,"distance":1.84,"proximity":"near"}"#
        let zoneEnter = #"{"v":1,"event":"enter","id":"3","user":"alice","device":"x","zone":"hall-b","venue":"expo","beacon":"booth-a","at":1763774735050}"#
        let zoneExit = #"{"v":1,"event":"exit","id":"4","user":"alice","device":"x","zone":"floor-2","venue":"expo","beacon":"booth-a","at":1763774830000,"entered":1763774735050,"dwell":94.95,"reason":"timeout"}"#
        try await publisher.publish(MQTTMessage(topic: h.topics.zoneEvent(zone: "hall-b", user: "alice"), payload: Array(zoneEnter.utf8)))
        try await publisher.publish(MQTTMessage(topic: h.topics.event(beacon: "booth-a", user: "alice"), payload: Array(enter.utf8)))
        try await publisher.publish(MQTTMessage(topic: h.topics.zoneEvent(zone: "floor-2", user: "alice"), payload: Array(zoneExit.utf8)))
        try await eventually(15, "both tails to print") { both.stdout.split(separator: "\n").count >= 3 && !hall.stdout.isEmpty }
        try await Task.sleep(for: .milliseconds(500))
        _ = await both.stop()
        _ = await hall.stop()
        #expect(both.stdout.split(separator: "\n") == [
            "2025-11-22T01:25:35.050Z  enter  alice  into zone hall-b",
            "2025-11-22T01:25:35.050Z  enter  alice  at booth-a  (near, 1.8 m)",
            "2025-11-22T01:27:10.000Z  exit   alice  out of zone floor-2  (timeout, 95 s in it)",
        ])
        #expect(hall.stdout.split(separator: "\n") == ["2025-11-22T01:25:35.050Z  enter  alice  into zone hall-b"])
        #expect(try await h.ctlAsync(["tail", "--zone", "hall-b", "--beacon", "booth-a"]).status != 0)
        await publisher.stop()
    }
}
