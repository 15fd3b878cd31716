import Testing
@testable import PresenceCore

@Suite struct RecordingTests {
    @Test func aLineKeepsThePayloadAndPutsTheArrivalInFront() throws {
        let batch = SightingBatch(node: "n1", seq: 3, sent: 1_763_774_734_123, sightings: [Sighting(ts: 1_763_774_734_050, id: "mac:c4:7c:8d:6a:2b:01", rssi: -60)])
        let line = try #require(Recording.line(payload: batch.encoded(), topic: "presence/v1/sightings/n1", received: 1_763_774_734_200))
        #expect(String(decoding: line, as: UTF8.self).hasPrefix(#"{"received":1763774734200,"topic":"presence/v1/sightings/n1","v":1,"node":"n1""#))
        let arrival = line.withUnsafeBytes { Recording.arrival(of: $0) }
        #expect(arrival?.received == 1_763_774_734_200 && arrival?.topic == "presence/v1/sightings/n1")
        #expect(try SightingBatchDecoder.decode(line, topicNode: "n1").get().batch == batch)
    }

    @Test func prettyPayloadsBecomeOneLineAndOtherPayloadsTextLines() throws {
        let pretty = Array("{\n  \"v\": 1\n}".utf8)
        let line = try #require(Recording.line(payload: pretty, topic: "t", received: 5))
        #expect(!line.contains(0x0A))
        #expect(String(decoding: try #require(Recording.line(payload: Array("{ }".utf8), topic: "t", received: 5)), as: UTF8.self) == #"{"received":5,"topic":"t"}"#)
        // A foreign node's status, and anything else that is text, is kept as a string.
        for text in ["offline", "[1]", "line\none \"quoted\"", ""] {
            let line = try #require(Recording.line(payload: Array(text.utf8), topic: "a/b", received: 7))
            #expect(!line.contains(0x0A))
            #expect(line.withUnsafeBytes { Recording.arrival(of: $0) }.map { "\($0.received) \($0.topic)" } == "7 a/b")
            #expect(line.withUnsafeBytes { Recording.text(of: $0) } == Array(text.utf8), "\(text)")
        }
        #expect(Recording.line(payload: [0x6F, 0xFF], topic: "t", received: 5) == nil)
    }

    @Test(arguments: [
        #"{"received":7,"topic":"a","v":1,"text":"x"}"#,
        #"{"received":7,"topic":"a","id":"x"}"#,
        #"{"received":7,"topic":"a","text":"x","rssi":nan}"#,
        #"{"received":7,"text":"x"}"#,
        #"{"received":7,"topic":"a","text":1}"#,
    ])
    func linesThatArePayloadsHaveNoText(_ line: String) {
        #expect(Array(line.utf8).withUnsafeBytes { Recording.text(of: $0) } == nil)
    }

    @Test(arguments: [
        #"{"topic":"a/b","x":1,"received":42}"#,
        #"{"received": 42, "topic": "a/b"}"#,
        #"{"received":42,"topic":"a\/b"}"#,
    ])
    func arrivalsWrittenOtherwiseAreStillRead(_ text: String) {
        let arrival = Array(text.utf8).withUnsafeBytes { Recording.arrival(of: $0) }
        #expect(arrival?.received == 42 && arrival?.topic == "a/b")
    }

    @Test(arguments: [#"{"received":"42","topic":"a"}"#, #"{"topic":"a"}"#, "garbage", #"{"received":42}"#])
    func linesWithoutAnArrivalAreRefused(_ text: String) {
        #expect(Array(text.utf8).withUnsafeBytes { Recording.arrival(of: $0) } == nil)
    }
}
