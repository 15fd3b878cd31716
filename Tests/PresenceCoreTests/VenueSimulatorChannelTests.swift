import Foundation
import Testing
@testable import PresenceCore

/// The simulator's radio channel: what scenarios that say nothing of the newer radio features
/// hear (pinned), and what each feature changes when it is turned on.
@Suite struct VenueSimulatorChannelTests {
    static let start: Int64 = 1_763_769_600_000
    static let tag = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:1"

    /// Two rooms split by a wall, three nodes, a visitor with a tag and one with a scanner, and
    /// every older radio feature on (shadowing, fading, loss, body, node gains).
    static func mixedVenue(radio: Scenario.Radio = Scenario.Radio()) -> Scenario {
        Scenario(
            venue: "mixed", seed: 21, radio: radio,
            walls: [Scenario.Wall(from: .init(x: 5, y: -5), to: .init(x: 5, y: 5), loss: 6)],
            beacons: [Scenario.Beacon(key: "a", x: 0, y: 0, identity: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1"),
                      Scenario.Beacon(key: "b", x: 10, y: 0, identity: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2")],
            nodes: [Scenario.Node(key: "node-a", x: 0, y: 0, beacon: "a"), Scenario.Node(key: "node-b", x: 10, y: 0, beacon: "b"),
                    Scenario.Node(key: "node-c", x: 5, y: 8)],
            people: [
                Scenario.Person(user: "tagged", device: tag, arrive: 2_000, entrance: .init(x: -3, y: 3),
                                stops: [Scenario.Stop(beacon: "a", dwell: 40_000), Scenario.Stop(beacon: "b", dwell: 50_000)]),
                Scenario.Person(user: "scanning", scanner: "badge-1", arrive: 5_000, entrance: .init(x: 13, y: 3), speed: 1.4,
                                stops: [Scenario.Stop(beacon: "b", dwell: 30_000, offset: 2), Scenario.Stop(beacon: "a", dwell: 45_000)]),
            ])
    }

    /// A radio with nothing random in it: no shadowing, fading, loss, body loss or gain error.
    static func quietRadio() -> Scenario.Radio {
        var radio = Scenario.Radio()
        radio.shadowingSigma = 0
        radio.fadingSigma = 0
        radio.packetLoss = 0
        radio.bodyLoss = 0
        radio.nodeGainSigma = 0
        return radio
    }

    /// One person with a tag standing at beacon `a` (the origin) for an hour, `offset` metres
    /// from it, heard by `nodes`.
    static func standing(radio: Scenario.Radio, nodes: [Scenario.Node], offset: Double = 0.001) -> Scenario {
        Scenario(venue: "still", seed: 4, radio: radio, beacons: [Scenario.Beacon(key: "a", x: 0, y: 0)], nodes: nodes,
                 people: [Scenario.Person(user: "still", device: tag, entrance: .init(x: 0, y: 0),
                                          stops: [Scenario.Stop(beacon: "a", dwell: 3_600_000, offset: offset)])])
    }

    /// How many packets each node heard.
    static func counts(_ heard: [VenueSimulator.Heard]) -> [String: Int] {
        heard.reduce(into: [:]) { $0[$1.node, default: 0] += 1 }
    }

    /// The Pearson correlation of the RSSI two nodes heard of the same packets.
    static func correlation(_ heard: [VenueSimulator.Heard], _ first: String, _ second: String) -> Double {
        let ofSecond = Dictionary(heard.filter { $0.node == second }.map { ($0.sighting.ts, Double($0.sighting.rssi)) }, uniquingKeysWith: { $1 })
        let pairs = heard.filter { $0.node == first }.compactMap { item in ofSecond[item.sighting.ts].map { (Double(item.sighting.rssi), $0) } }
        let count = Double(pairs.count)
        let meanX = pairs.reduce(0) { $0 + $1.0 } / count, meanY = pairs.reduce(0) { $0 + $1.1 } / count
        let covariance = pairs.reduce(0) { $0 + ($1.0 - meanX) * ($1.1 - meanY) }
        let varianceX = pairs.reduce(0) { $0 + ($1.0 - meanX) * ($1.0 - meanX) }, varianceY = pairs.reduce(0) { $0 + ($1.1 - meanY) * ($1.1 - meanY) }
        return covariance / (varianceX * varianceY).squareRoot()
    }

    /// Everything heard over `seconds` of the scenario.
    static func run(_ scenario: Scenario, seconds: Int64) throws -> [VenueSimulator.Heard] {
        var simulator = try VenueSimulator(scenario: scenario, start: start)
        return (1 ... seconds).flatMap { simulator.advance(to: start + $0 * 1_000) }
    }

    /// FNV-1a over every sighting's time, node, transmitter and RSSI, in order.
    static func fingerprint(_ heard: [VenueSimulator.Heard]) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for item in heard {
            for byte in "\(item.sighting.ts) \(item.node) \(item.sighting.id) \(item.sighting.rssi)\n".utf8 {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
        }
        return hash
    }

    static func decode(_ json: String) throws -> Scenario {
        try JSONDecoder().decode(Scenario.self, from: Data(json.utf8))
    }

    @Test func aScenarioWithTheOlderRadioKeysHearsWhatItHeardBeforeTheNewerFeatures() throws {
        let heard = try Self.run(Self.mixedVenue(), seconds: 150)
        #expect(Set(heard.map(\.node)) == ["node-a", "node-b", "node-c", "badge-1"], "tags and carried scanners are both pinned")
        #expect(heard.count == 355)
        #expect(Self.fingerprint(heard) == 16_164_810_959_168_592_994, "recorded before the radio gained its opt-in features")
    }

    @Test func everyNewerRadioKeyWrittenAtItsDefaultHearsTheSameAsLeavingItOut() throws {
        let radio = try JSONDecoder().decode(Scenario.Radio.self, from: Data("""
            {"lossFadeWidth": 0, "turnInterval": "0s", "sharedShadowingSigma": 0, "fading": "gaussian", "nodeGainSpread": 0}
            """.utf8))
        #expect(radio == Scenario.Radio())
        let heard = try Self.run(Self.mixedVenue(radio: radio), seconds: 150)
        #expect(heard == (try Self.run(Self.mixedVenue(), seconds: 150)))
        #expect(Self.fingerprint(heard) == 16_164_810_959_168_592_994)
    }

    @Test func aScenarioFileWithOnlyTheOlderRadioKeysStillDecodes() throws {
        let scenario = try Self.decode("""
            {"venue": "v", "radio": {"pathLossExponent": 2, "shadowingSigma": 3, "shadowingTime": "4s", "fadingSigma": 1,
                                     "packetLoss": 0.2, "bodyLoss": 5, "nodeGainSigma": 1, "sensitivity": -95, "txPower": -60,
                                     "advertisingInterval": "500ms"},
             "beacons": [{"key": "a", "x": 0, "y": 0}], "nodes": [{"key": "n", "x": 0, "y": 0, "beacon": "a"}]}
            """)
        var radio = Scenario.Radio()
        radio.pathLossExponent = 2
        radio.shadowingSigma = 3
        radio.shadowingTime = 4_000
        radio.fadingSigma = 1
        radio.packetLoss = 0.2
        radio.bodyLoss = 5
        radio.nodeGainSigma = 1
        radio.sensitivity = -95
        radio.txPower = -60
        radio.advertisingInterval = 500
        #expect(scenario.radio == radio)
    }

    @Test func theNewerRadioKeysDecode() throws {
        let scenario = try Self.decode("""
            {"venue": "v", "radio": {"lossFadeWidth": 3, "turnInterval": "8s", "sharedShadowingSigma": 3, "fading": "rayleigh", "nodeGainSpread": 4},
             "beacons": [{"key": "a", "x": 0, "y": 0}], "nodes": [{"key": "n", "x": 0, "y": 0, "beacon": "a"}]}
            """)
        #expect(scenario.radio.lossFadeWidth == 3)
        #expect(scenario.radio.turnInterval == 8_000)
        #expect(scenario.radio.sharedShadowingSigma == 3)
        #expect(scenario.radio.fading == .rayleigh)
        #expect(scenario.radio.nodeGainSpread == 4)
    }

    @Test func anUnknownFadingModelIsRefusedByName() {
        #expect {
            try Self.decode(#"{"venue": "v", "radio": {"fading": "rician"}, "beacons": [], "nodes": []}"#)
        } throws: { error in
            "\(error)".contains("fading 'rician' is not known: expected gaussian or rayleigh")
        }
    }

    /// The default radio with one change.
    static func radio(_ change: (inout Scenario.Radio) -> Void) -> Scenario.Radio {
        var radio = Scenario.Radio()
        change(&radio)
        return radio
    }

    @Test(arguments: [
        (radio { $0.lossFadeWidth = -1 }, "lossFadeWidth -1.0 dB is not valid"),
        (radio { $0.turnInterval = 500 }, "turnInterval 500 ms is not valid"),
        (radio { $0.sharedShadowingSigma = -2 }, "sharedShadowingSigma -2.0 dB is not valid"),
        (radio { $0.nodeGainSpread = -4 }, "nodeGainSpread -4.0 dB is not valid"),
    ])
    func aRadioFigureOutOfRangeIsRefusedByName(radio: Scenario.Radio, message: String) {
        let error = #expect(throws: ValueError.self) { try Self.standing(radio: radio, nodes: []).validate() }
        #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "no error")")
    }

    @Test func packetsNearTheFloorAreLostMoreOftenSoAFarNodeHearsASmallerShare() throws {
        var radio = Self.quietRadio()
        radio.sensitivity = -92
        radio.lossFadeWidth = 3
        // Expected -65.6 dBm at 2 m (26 dB above the floor, nothing lost), -87.6 dBm at 20 m (4.4 dB above it: 19 % lost).
        let nodes = [Scenario.Node(key: "near", x: 2, y: 0), Scenario.Node(key: "far", x: 20, y: 0)]
        let faded = Self.counts(try Self.run(Self.standing(radio: radio, nodes: nodes), seconds: 600))
        let near = Double(faded["near"] ?? 0), far = Double(faded["far"] ?? 0)
        #expect(near > 590)
        #expect(far / near > 0.72 && far / near < 0.9, "far \(far), near \(near)")

        radio.lossFadeWidth = 0
        let flat = Self.counts(try Self.run(Self.standing(radio: radio, nodes: nodes), seconds: 600))
        #expect(flat["far"] == flat["near"], "without the width, distance costs no packets")
    }

    @Test func aDwellerWhoTurnsIsBlockedByTheirBodyAtTimesAndNotAtOthers() throws {
        var radio = Self.quietRadio()
        radio.bodyLoss = 10
        let nodes = [Scenario.Node(key: "booth", x: 0, y: 0, beacon: "a")]
        let facing = try Self.run(Self.standing(radio: radio, nodes: nodes, offset: 1), seconds: 600)
        #expect(Set(facing.map(\.sighting.rssi)) == [-59], "facing the beacon, the body never blocks its node")

        radio.turnInterval = 8_000
        let turning = Self.standing(radio: radio, nodes: nodes, offset: 1)
        let levels = try Self.run(turning, seconds: 600).map(\.sighting.rssi)
        #expect(Set(levels) == [-59, -69])
        let changes = zip(levels, levels.dropFirst()).filter { $0 != $1 }.count
        #expect(changes >= 20, "\(changes) changes that mattered over 600 s of turns every 8 s")
        var simulator = try VenueSimulator(scenario: turning, start: Self.start)
        #expect((1 ... 600).allSatisfy { simulator.truth(at: Self.start + $0 * 1_000)["still"] == "a" }, "turning is still one stay")
    }

    @Test func sharedShadowingMovesTheRSSIOfOneTagAtTwoNodesTogether() throws {
        var radio = Self.quietRadio()
        radio.shadowingSigma = 3
        radio.fadingSigma = 1
        let nodes = [Scenario.Node(key: "east", x: 5, y: 0), Scenario.Node(key: "west", x: -5, y: 0)]
        let apart = Self.correlation(try Self.run(Self.standing(radio: radio, nodes: nodes), seconds: 1_800), "east", "west")
        #expect(abs(apart) < 0.3, "per-link shadowing alone: correlation \(apart)")

        radio.sharedShadowingSigma = 6
        let together = Self.correlation(try Self.run(Self.standing(radio: radio, nodes: nodes), seconds: 1_800), "east", "west")
        #expect(together > 0.5, "36 of 46 dB² shared: correlation \(together)")
    }

    @Test func rayleighFadingBringsDeepFadesThatGaussianFadingOfTwoDecibelsDoesNot() throws {
        var radio = Self.quietRadio()
        radio.fadingSigma = 2
        let nodes = [Scenario.Node(key: "n", x: 2, y: 0)]
        let mean = -59 - 22 * log10(2.0)
        func fades(_ heard: [VenueSimulator.Heard]) -> [Double] { heard.map { Double($0.sighting.rssi) - mean } }
        let gaussian = fades(try Self.run(Self.standing(radio: radio, nodes: nodes), seconds: 1_800))
        #expect(gaussian.count > 1_700 && gaussian.allSatisfy { $0 > -10 })

        radio.fading = .rayleigh
        let rayleigh = fades(try Self.run(Self.standing(radio: radio, nodes: nodes), seconds: 1_800))
        let deep = Double(rayleigh.filter { $0 < -10 }.count) / Double(rayleigh.count)
        #expect(deep > 0.06 && deep < 0.13, "\(deep) of the packets faded by more than 10 dB, 9.5 % expected")
        #expect(rayleigh.contains { $0 < -20 }, "1 % of the packets fade by 20 dB or more")
    }

    @Test func uniformNodeGainsStayWithinTheirSpreadAndAreTheOnesApplied() throws {
        var radio = Self.quietRadio()
        radio.nodeGainSpread = 4
        let nodes = (1 ... 40).map { Scenario.Node(key: "n\($0)", x: 3 * cos(Double($0)), y: 3 * sin(Double($0))) }
        let scenario = Self.standing(radio: radio, nodes: nodes)
        let simulator = try VenueSimulator(scenario: scenario, start: Self.start)
        let gains = nodes.map { simulator.gain(of: $0.key) }
        #expect(gains.allSatisfy { abs($0) <= 4 })
        #expect((gains.max() ?? 0) - (gains.min() ?? 0) > 5, "40 draws cover most of the 8 dB: \(gains)")
        #expect(simulator.gain(of: "elsewhere") == 0)

        let mean = -59 - 22 * log10(3.0)
        let heard = try Self.run(scenario, seconds: 5)
        #expect(heard.count > 150)
        #expect(heard.allSatisfy { abs(Double($0.sighting.rssi) - mean - simulator.gain(of: $0.node)) <= 0.51 }, "each node hears with its gain")
    }
}
