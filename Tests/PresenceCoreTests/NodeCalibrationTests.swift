import Testing
@testable import PresenceCore

#if canImport(Glibc)
import Glibc
#endif

/// Self-calibration: node receive offsets fitted from nodes hearing each other, and estimated
/// from traffic alone.
@Suite struct NodeCalibrationTests {
    /// Nine nodes on a 3×3 grid 6 m apart, each with its own receive and transmit offset.
    private static let nodes = (0 ..< 9).map { NodeLinkCalibration.Node(key: "node-\($0)", x: Double($0 % 3) * 6, y: Double($0 / 3) * 6) }
    private static let receive: [Double] = [3, -4, 1.5, 0, -2.5, 4, -1, 2, -3]
    private static let transmit: [Double] = [1, 0, -2, 2, 0.5, -1, 0, 1.5, -0.5]

    /// Every node hears every other `readings` times: the model's path loss with exponent 2.2,
    /// plus gaussian noise of `noise` dB per reading; with `wall`, one link loses 15 dB more.
    private static func calibration(noise: Double, readings: Int = 60, wall: Bool = false, seed: UInt64 = 5) -> NodeLinkCalibration {
        var calibration = NodeLinkCalibration(nodes: nodes)
        var random = RandomSource(seed: seed)
        for i in nodes.indices {
            for j in nodes.indices where i != j {
                let distance = ((nodes[i].x - nodes[j].x) * (nodes[i].x - nodes[j].x) + (nodes[i].y - nodes[j].y) * (nodes[i].y - nodes[j].y)).squareRoot()
                let blocked = wall && i == 0 && j == 8 ? 15.0 : 0
                for _ in 0 ..< readings {
                    let loss = 22 * log10(distance) - receive[i] - transmit[j] + blocked + random.gaussian() * noise
                    calibration.add(receiver: nodes[i].key, transmitter: nodes[j].key, pathLoss: loss)
                }
            }
        }
        return calibration
    }

    /// The largest difference between the fitted offsets and the true ones (centred).
    private static func error(_ fit: NodeLinkCalibration.Fit) -> Double {
        let mean = receive.reduce(0, +) / Double(receive.count)
        return nodes.indices.map { abs((fit.offsets[nodes[$0].key] ?? .infinity) + (receive[$0] - mean)) }.max() ?? .infinity
    }

    @Test func linksBetweenNodesGiveBackEachNodesOffsetAndTheExponent() throws {
        let fit = try #require(Self.calibration(noise: 4).fit())
        #expect(fit.links == 72)
        #expect(Self.error(fit) < 1, "offsets \(fit.offsets)")
        #expect(abs(fit.exponent - 2.2) < 0.15)
        #expect(fit.residual < 1.5)
    }

    @Test func aWallOnOneLinkDoesNotPullTheFitAway() throws {
        let fit = try #require(Self.calibration(noise: 2, wall: true).fit())
        #expect(Self.error(fit) < 1, "offsets \(fit.offsets)")
    }

    @Test func eachAreaGetsItsOwnExponentAndOffsetsAndNoLinkAcrossAreas() throws {
        // Two floors with the same coordinates: floor 2 hears 3 dB hotter across the board and
        // loses less over distance; both floors hear each other's nodes, at distances their
        // coordinates do not tell.
        let floors = ["hall floor 1", "hall floor 2"]
        let nodes = floors.flatMap { area in Self.nodes.map { NodeLinkCalibration.Node(key: "\(area)/\($0.key)", x: $0.x, y: $0.y, area: area) } }
        var calibration = NodeLinkCalibration(nodes: nodes)
        var random = RandomSource(seed: 11)
        for (f, area) in floors.enumerated() {
            let exponent = f == 0 ? 2.2 : 1.8
            for i in Self.nodes.indices {
                for j in Self.nodes.indices where i != j {
                    let distance = ((Self.nodes[i].x - Self.nodes[j].x) * (Self.nodes[i].x - Self.nodes[j].x) + (Self.nodes[i].y - Self.nodes[j].y) * (Self.nodes[i].y - Self.nodes[j].y)).squareRoot()
                    for _ in 0 ..< 40 {
                        let loss = 10 * exponent * log10(distance) - Self.receive[i] - 3 * Double(f) - Self.transmit[j] + random.gaussian() * 2
                        calibration.add(receiver: "\(area)/\(Self.nodes[i].key)", transmitter: "\(area)/\(Self.nodes[j].key)", pathLoss: loss)
                        calibration.add(receiver: "\(area)/\(Self.nodes[i].key)", transmitter: "\(floors[1 - f])/\(Self.nodes[j].key)", pathLoss: loss + 20)
                    }
                }
            }
        }
        let fit = try #require(calibration.fit())
        #expect(fit.groups.map(\.area) == floors)
        #expect(fit.groups.map(\.links) == [72, 72], "links across floors are not taken")
        #expect(fit.links == 144)
        #expect(abs(fit.groups[0].exponent - 2.2) < 0.15 && abs(fit.groups[1].exponent - 1.8) < 0.15, "\(fit.groups)")
        #expect(abs(fit.exponent - 2.0) < 0.15, "the links' mean")
        let mean = Self.receive.reduce(0, +) / Double(Self.receive.count)
        for area in floors {
            #expect(fit.groups.first { $0.area == area }?.nodes.count == 9)
            for (i, node) in Self.nodes.enumerated() {
                let offset = try #require(fit.offsets["\(area)/\(node.key)"])
                #expect(abs(offset + (Self.receive[i] - mean)) < 1, "\(area)/\(node.key): each floor centred on its own")
            }
        }
    }

    @Test func anIslandOfNodesThatHearNoOtherIsFittedOnItsOwn() throws {
        // Three more nodes, far off in the same area, hearing only each other: too few links to
        // fit three receive and three transmit offsets and an exponent, so they are left out and
        // the rest is fitted as before.
        let island = [("far-0", 200.0, 0.0), ("far-1", 206.0, 0.0), ("far-2", 200.0, 9.0)]
        var nodes = Self.nodes
        nodes += island.map { NodeLinkCalibration.Node(key: $0.0, x: $0.1, y: $0.2) }
        var calibration = NodeLinkCalibration(nodes: nodes)
        for i in Self.nodes.indices {
            for j in Self.nodes.indices where i != j {
                let distance = ((Self.nodes[i].x - Self.nodes[j].x) * (Self.nodes[i].x - Self.nodes[j].x) + (Self.nodes[i].y - Self.nodes[j].y) * (Self.nodes[i].y - Self.nodes[j].y)).squareRoot()
                for _ in 0 ..< 20 { calibration.add(receiver: Self.nodes[i].key, transmitter: Self.nodes[j].key, pathLoss: 22 * log10(distance) - Self.receive[i] - Self.transmit[j]) }
            }
        }
        for a in island {
            for b in island where a.0 != b.0 {
                for _ in 0 ..< 20 { calibration.add(receiver: a.0, transmitter: b.0, pathLoss: 50) }
            }
        }
        let fit = try #require(calibration.fit())
        #expect(fit.groups.count == 1 && fit.groups.first?.nodes.count == 9)
        #expect(island.allSatisfy { fit.offsets[$0.0] == nil })
        #expect(Self.error(fit) < 0.01, "offsets \(fit.offsets)")
    }

    @Test func tooFewLinksGiveNoFit() {
        var calibration = NodeLinkCalibration(nodes: Self.nodes)
        for _ in 0 ..< 20 {
            calibration.add(receiver: "node-0", transmitter: "node-1", pathLoss: 60)
            calibration.add(receiver: "node-1", transmitter: "node-0", pathLoss: 61)
            calibration.add(receiver: "node-2", transmitter: "node-0", pathLoss: 70)
            calibration.add(receiver: "stranger", transmitter: "node-0", pathLoss: 70)
        }
        #expect(calibration.fit() == nil, "three links, too few readings on none, but the exponent and six offsets are not determined")
    }

    @Test func theTrafficEstimatorEvensOutNodesHeardFromTheSameDistance() throws {
        var estimator = NodeOffsetEstimator()
        var random = RandomSource(seed: 9)
        for (node, gain) in zip(["a", "b", "c"], [3.0, 0, -4]) {
            for _ in 0 ..< 500 {
                estimator.add(node: node, pathLoss: 2 - gain + random.gaussian() * 3)
            }
        }
        estimator.add(node: "d", pathLoss: 30)
        let estimates = estimator.estimates()
        #expect(estimates["d"] == nil, "one reading is not enough")
        let a = try #require(estimates["a"]), b = try #require(estimates["b"]), c = try #require(estimates["c"])
        #expect(abs(a.offset - -3) < 0.6 && abs(b.offset) < 0.6 && abs(c.offset - 4) < 0.6, "\(estimates)")
        #expect(a.samples == 500)
    }
}

/// Node beacons: each node's identity follows from its key alone.
@Suite struct NodeBeaconTests {
    @Test func eachNodeHasItsOwnValidIdentityKnownFromItsKey() throws {
        let keys = (0 ..< 2_000).map { "node-\($0)" }
        let identities = keys.map(NodeBeacon.identity(of:))
        #expect(Set(identities).count == keys.count)
        #expect(NodeBeacon.identity(of: "node-7") == identities[7], "the same key, the same identity")
        for identity in identities.prefix(50) {
            #expect(identity.hasPrefix("ibeacon:\(NodeBeacon.uuid):"))
            #expect(try Identity(parsing: identity, allowNode: false).description == identity)
        }
        #expect(!identities.contains("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"))
    }
}

/// The fit on what the simulator's nodes hear of each other's node beacons.
@Suite struct SimulatedNodeCalibrationTests {
    @Test func nodeBeaconsHeardInASimulatedHallGiveBackTheNodesGains() throws {
        var radio = Scenario.Radio()
        radio.nodeGainSigma = 0
        radio.nodeGainSpread = 4
        radio.shadowingSigma = 4
        radio.nodeBeaconInterval = 1_000
        let nodes = (0 ..< 12).map { Scenario.Node(key: "node-\($0)", x: Double($0 % 4) * 5, y: Double($0 / 4) * 5) }
        let scenario = Scenario(venue: "hall", seed: 21, radio: radio, beacons: [Scenario.Beacon(key: "a", x: 0, y: 0)], nodes: nodes, people: [])
        var simulator = try VenueSimulator(scenario: scenario, start: 0)
        var calibration = NodeLinkCalibration(nodes: nodes.map { NodeLinkCalibration.Node(key: $0.key, x: $0.x, y: $0.y) })
        let senders = Dictionary(uniqueKeysWithValues: nodes.map { (NodeBeacon.identity(of: $0.key), $0.key) })
        let heard = simulator.advance(to: 5 * 60_000)
        for sighting in heard {
            let sender = try #require(senders[sighting.sighting.id], "only node beacons are on the air")
            #expect(sighting.sighting.tx == -59, "a node advertises the nominal power, not its own error")
            calibration.add(receiver: sighting.node, transmitter: sender, pathLoss: Double(-59 - sighting.sighting.rssi))
        }
        let fit = try #require(calibration.fit())
        let gains = nodes.map { simulator.gain(of: $0.key) }
        let mean = gains.reduce(0, +) / Double(gains.count)
        #expect((gains.max() ?? 0) - (gains.min() ?? 0) > 4, "the hall's nodes differ enough for the test to mean something")
        for (node, gain) in zip(nodes, gains) {
            let offset = try #require(fit.offsets[node.key])
            #expect(abs(offset + (gain - mean)) < 1, "\(node.key): fitted \(offset), true \(-(gain - mean))")
        }
        #expect(abs(fit.exponent - 2.2) < 0.2)
    }
}
