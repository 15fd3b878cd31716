import Testing
@testable import PresenceCore

@Suite struct SightingBatchDecoderTests {
    private let id = "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:2:3"

    private func decode(_ text: String, node: String = "hall-a") -> Result<SightingBatchDecoder.Decoded, SightingBatchDecoder.Rejection> {
        SightingBatchDecoder.decode(Array(text.utf8), topicNode: node)
    }

    @Test func decodesTheContractExample() throws {
        let text = """
            {"v": 1, "node": "hall-a", "seq": 42, "sent": 1763774734123,
             "sightings": [
               {"ts": 1763774734050, "id": "\(id)",
                "rssi": -67, "tx": -59, "addr": "c4:7c:8d:6a:2b:01"}
             ]}
            """
        let decoded = try decode(text).get()
        #expect(decoded.droppedSightings == 0)
        #expect(decoded.batch == SightingBatch(node: "hall-a", seq: 42, sent: 1_763_774_734_123, sightings: [
            Sighting(ts: 1_763_774_734_050, id: id, rssi: -67, tx: -59, addr: "c4:7c:8d:6a:2b:01"),
        ]))
    }

    @Test func encodedBatchesDecodeToThemselves() throws {
        let batch = SightingBatch(node: "n1", seq: 7, sent: 1_763_774_734_123, sightings: [
            Sighting(ts: 1_763_774_734_000, id: id, rssi: -127, tx: nil, addr: nil),
            Sighting(ts: 1_763_774_734_001, id: "mac:c4:7c:8d:6a:2b:01", rssi: 20, tx: -41, addr: "c4:7c:8d:6a:2b:01"),
        ])
        #expect(try SightingBatchDecoder.decode(batch.encoded(), topicNode: "n1").get().batch == batch)
    }

    @Test(arguments: [
        ("not json", "not_json"),
        ("", "not_json"),
        ("[1,2]", "not_an_object"),
        (#"{"v":1,"node":"hall-a","seq":1,"sent":1763774734123}"#, "missing_field"),
        (#"{"v":1,"node":"hall-a","seq":1,"sightings":[]}"#, "missing_field"),
        (#"{"node":"hall-a","seq":1,"sent":1763774734123,"sightings":[]}"#, "missing_field"),
        (#"{"v":2,"node":"hall-a","seq":1,"sent":1763774734123,"sightings":[]}"#, "unsupported_version"),
        (#"{"v":1,"node":"hall-b","seq":1,"sent":1763774734123,"sightings":[]}"#, "wrong_node"),
        (#"{"v":1,"node":"hall-a","seq":"1","sent":1763774734123,"sightings":[]}"#, "bad_field"),
        (#"{"v":1,"node":"hall-a","seq":-1,"sent":1763774734123,"sightings":[]}"#, "bad_field"),
        (#"{"v":1,"node":7,"seq":1,"sent":1763774734123,"sightings":[]}"#, "bad_field"),
        (#"{"v":1,"node":"hall-a","seq":1,"sent":1763774734123,"sightings":{}}"#, "bad_field"),
        (#"{"v":1,"node":"hall-a","seq":1,"sent":1763774734123,"sightings":[]} trailing"#, "not_json"),
        (#"{"v":1,"node":"hall-a","seq":1,"sent":1763774734123,"sightings":[],"x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#, "not_json"),
    ])
    func rejectsWholeBatches(_ text: String, _ reason: String) {
        guard case .failure(let rejection) = decode(text) else {
            Issue.record("accepted \(text)")
            return
        }
        #expect(rejection.reason == reason)
    }

    @Test func rejectsOversizedPayloadsBeforeParsing() {
        let zeros = [UInt8](repeating: 0, count: 2 << 20)
        guard case .failure(let rejection) = SightingBatchDecoder.decode(zeros, topicNode: "hall-a") else {
            Issue.record("accepted 2 MiB of zeros")
            return
        }
        #expect(rejection == .tooLarge(bytes: 2 << 20))
    }

    @Test func rejectsMoreThanTenThousandSightings() {
        let one = #"{"ts":1763774734050,"id":"\#(id)","rssi":-60}"#
        let text = #"{"v":1,"node":"hall-a","seq":1,"sent":1763774734123,"sightings":["# + Array(repeating: one, count: 10_001).joined(separator: ",") + "]}"
        #expect(text.utf8.count < SightingLimits.maximumBytes)
        guard case .failure(let rejection) = decode(text) else {
            Issue.record("accepted 10,001 sightings")
            return
        }
        #expect(rejection == .tooManySightings)
        let exactly = #"{"v":1,"node":"hall-a","seq":1,"sent":1763774734123,"sightings":["# + Array(repeating: one, count: 10_000).joined(separator: ",") + "]}"
        #expect((try? decode(exactly).get().batch.sightings.count) == 10_000)
    }

    @Test func dropsBadSightingsAloneAndKeepsTheRest() throws {
        let good = #"{"ts":1763774734050,"id":"\#(id)","rssi":-60,"extra":{"ignored":[1,2]}}"#
        let bad = [
            #"{"id":"\#(id)","rssi":-60}"#,                          // no ts
            #"{"ts":1763774734050,"rssi":-60}"#,                     // no id
            #"{"ts":1763774734050,"id":"\#(id)"}"#,                  // no rssi
            #"{"ts":1763774734050,"id":"\#(id)","rssi":-128}"#,      // below range
            #"{"ts":1763774734050,"id":"\#(id)","rssi":21}"#,        // above range
            #"{"ts":1763774734050,"id":"\#(id)","rssi":"-60"}"#,     // wrong type
            #"{"ts":1763774734050,"id":"\#(id)","rssi":-60.5}"#,     // not an integer
            #"{"ts":1763774734050,"id":"\#(id)","rssi":-60,"tx":-300}"#, // tx out of range
            #"{"ts":1763774734050,"id":"","rssi":-60}"#,             // empty id
            #"{"ts":12,"id":"\#(id)","rssi":-60}"#,                  // implausible clock
            #"{"ts":1763774734050,"id":42,"rssi":-60}"#,             // id not a string
            "17",                                                    // not an object
        ]
        let text = #"{"v":1,"node":"hall-a","seq":3,"sent":1763774734123,"sightings":["# + ([good] + bad + [good]).joined(separator: ",") + "]}"
        let decoded = try decode(text).get()
        #expect(decoded.batch.sightings.count == 2)
        #expect(decoded.droppedSightings == bad.count)
    }

    /// Sightings in the scanner's own compact layout take a fast path; the same sighting written
    /// any other way (keys reordered, spaces) goes through the general reader. Both must agree.
    @Test(arguments: [
        (#"{"ts":1763774734050,"id":"ID","rssi":-60}"#, #"{ "rssi" : -60 , "id" : "ID", "ts" : 1763774734050 }"#),
        (#"{"ts":1763774734050,"id":"ID","rssi":-60,"tx":-59}"#, #"{"tx":-59, "ts":1763774734050,"rssi":-60,"id":"ID"}"#),
        (#"{"ts":1763774734050,"id":"ID","rssi":-60,"tx":-59,"addr":"c4:7c:8d:6a:2b:01"}"#,
         #"{"addr":"c4:7c:8d:6a:2b:01","tx":-59,"rssi":-60,"id":"ID","ts":1763774734050}"#),
        (#"{"ts":1763774734050,"id":"ID","rssi":-60,"tx":null}"#, #"{"ts":1763774734050, "id":"ID", "rssi":-60}"#),
        (#"{"ts":1763774734050,"id":"ID","rssi":-60,"rssi":-70}"#, #"{"ts":1763774734050,"id":"ID","rssi":-70}"#),
        (#"{"ts":1763774734050,"id":"mac:c4:7c:8d:6a:2b:0\u0031","rssi":-60}"#, #"{"rssi":-60,"ts":1763774734050,"id":"mac:c4:7c:8d:6a:2b:01"}"#),
        (#"{"ts":1763774734050,"id":"ID","rssi":-60,"tx":-59,"tlm":{"batt":3000}}"#, #"{"tlm":{"batt":3000},"ts":1763774734050,"id":"ID","rssi":-60,"tx":-59}"#),
        (#"{"ts":1763774734050,"id":"ID","rssi":-60.0}"#, #"{"rssi":-60.0,"id":"ID","ts":1763774734050}"#),
        (#"{"ts":1763774734050,"id":"ID","rssi":-600}"#, #"{"rssi":-600,"id":"ID","ts":1763774734050}"#),
        (#"{"ts":1763774734050,"id":"ID","rssi":-60,"tx":"-59"}"#, #"{"tx":"-59","rssi":-60,"id":"ID","ts":1763774734050}"#),
        (#"{"ts":1763774734050,"id":"ID","rssi":-60,"addr":7}"#, #"{"addr":7,"rssi":-60,"id":"ID","ts":1763774734050}"#),
    ])
    func theCompactLayoutAndAnyOtherDecodeAlike(_ compact: String, _ other: String) throws {
        func batch(_ sighting: String) -> String {
            #"{"v":1,"node":"hall-a","seq":3,"sent":1763774734123,"sightings":["# + sighting.split(separator: "ID", omittingEmptySubsequences: false).joined(separator: id) + "]}"
        }
        let fast = try decode(batch(compact)).get()
        let general = try decode(batch(other)).get()
        #expect(fast == general)
        #expect(fast.batch.sightings.count + fast.droppedSightings == 1)
    }

    @Test func toleratesNullOptionalFieldsAndUnknownTopLevelFields() throws {
        let text = #"{"v":1,"node":"hall-a","seq":3,"sent":1763774734123,"received":1,"sightings":[{"ts":1763774734050,"id":"\#(id)","rssi":-60,"tx":null,"addr":null}]}"#
        let decoded = try decode(text).get()
        #expect(decoded.batch.sightings == [Sighting(ts: 1_763_774_734_050, id: id, rssi: -60)])
    }

    @Test func telemetryAsTheScannerWritesItIsDecodedAndEncodesBack() throws {
        let batch = SightingBatch(node: "n1", seq: 7, sent: 1_763_774_734_123, sightings: [
            Sighting(ts: 1_763_774_734_000, id: id, rssi: -60, tx: -59, addr: "c4:7c:8d:6a:2b:01",
                     telemetry: Telemetry(batteryMillivolts: 2_840, temperature: 19.25, advertisementCount: 5_223, uptime: 1_094.8)),
            Sighting(ts: 1_763_774_734_001, id: "mac:c4:7c:8d:6a:2b:02", rssi: -70, telemetry: Telemetry(encrypted: true)),
            Sighting(ts: 1_763_774_734_002, id: id, rssi: -61, telemetry: Telemetry(temperature: -4.5)),
        ])
        let encoded = batch.encoded()
        #expect(String(decoding: encoded, as: UTF8.self).contains(#""tlm":{"batt":2840,"temp":19.25,"adv":5223,"up":1094.8}"#))
        #expect(try SightingBatchDecoder.decode(encoded, topicNode: "n1").get().batch == batch)
        // The aggregator's scan reads the same telemetry.
        var scanned: [SightingBatchDecoder.Scanned] = []
        let read = encoded.withUnsafeBytes { bytes in
            _ = SightingBatchDecoder.scan(bytes, topicNode: "n1", into: &scanned)
            return scanned.map { $0.telemetry(in: bytes) }
        }
        #expect(read == batch.sightings.map(\.telemetry))
    }

    /// Telemetry is an extra: a member out of range or of the wrong type is left out, a `tlm` that
    /// is not an object (or says nothing) is none, and the sighting stays either way.
    @Test(arguments: [
        (#""tlm":{"batt":0,"temp":22.5}"#, Telemetry(temperature: 22.5)),
        (#""tlm":{"batt":70000,"temp":128,"adv":-1,"up":-2}"#, nil),
        (#""tlm":{"batt":"2900","temp":null,"adv":4294967296,"up":429496730}"#, nil),
        (#""tlm":{"batt":2900.5,"encrypted":"yes","extra":[1,{"a":2}]}"#, nil),
        (#""tlm":[2900]"#, nil),
        (#""tlm":null"#, nil),
        (#""tlm":{}"#, nil),
        (#""tlm":{"batt":3012,"up":429496729.5,"adv":4294967295}"#, Telemetry(batteryMillivolts: 3_012, advertisementCount: 4_294_967_295, uptime: 429_496_729.5)),
    ] as [(String, Telemetry?)])
    func telemetryOutOfRangeIsLeftOutAndTheSightingKept(_ member: String, _ expected: Telemetry?) throws {
        for layout in [#"{"ts":1763774734050,"id":"\#(id)","rssi":-60,\#(member)}"#, #"{\#(member),"rssi":-60,"id":"\#(id)","ts":1763774734050}"#] {
            let decoded = try decode(#"{"v":1,"node":"hall-a","seq":3,"sent":1763774734123,"sightings":["# + layout + "]}").get()
            #expect(decoded.droppedSightings == 0)
            #expect(decoded.batch.sightings == [Sighting(ts: 1_763_774_734_050, id: id, rssi: -60, telemetry: expected)], "\(layout)")
        }
    }
}
