#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Simulates what scanner nodes hear in a venue: people walk their itineraries; tags and beacons
/// advertise; each packet's RSSI follows a log-distance path loss with walls, the carrier's body,
/// slowly varying shadowing, fast fading and each receiver's gain error; packets get lost. Pure
/// and deterministic: time goes in, sightings come out, and the ground truth is known.
public struct VenueSimulator: Sendable {
    public let scenario: Scenario
    /// The epoch time (ms) the scenario's time zero maps to.
    public let start: Int64
    private var itineraries: [String: Itinerary] = [:]
    private var transmitters: [Transmitter]
    private var links: [LinkID: LinkState] = [:]
    private let gains: [String: Double]
    private let beaconsByKey: [String: Scenario.Beacon]
    private let receivingNodes: Set<String>?

    /// What a node heard.
    public struct Heard: Sendable, Equatable {
        public var node: String
        public var sighting: Sighting
    }

    /// Simulates `scenario` from epoch time `start`; with `nodes`, only those nodes' sightings
    /// are produced (the rest of the world is unchanged).
    public init(scenario: Scenario, start: Int64, nodes: Set<String>? = nil) throws(ValueError) {
        try scenario.validate()
        self.scenario = scenario
        self.start = start
        receivingNodes = nodes
        beaconsByKey = Dictionary(scenario.beacons.map { ($0.key, $0) }, uniquingKeysWith: { $1 })
        var gains: [String: Double] = [:]
        for key in scenario.nodes.map(\.key) + scenario.people.compactMap(\.scanner) where gains[key] == nil {
            gains[key] = scenario.radio.gain(of: key, seed: scenario.seed)
        }
        self.gains = gains
        var transmitters: [Transmitter] = []
        for person in scenario.people {
            itineraries[person.user] = Itinerary(person: person, beacons: beaconsByKey, seed: scenario.seed,
                                                 turnInterval: scenario.radio.turnInterval)
            if let device = person.device {
                transmitters.append(Transmitter(kind: .tag(user: person.user), identity: device, tx: person.tx ?? scenario.radio.txPower,
                                                seed: scenario.seed, interval: scenario.radio.advertisingInterval))
            }
        }
        if scenario.people.contains(where: { $0.scanner != nil }) {
            for beacon in scenario.beacons {
                guard let identity = beacon.identity else { continue }
                transmitters.append(Transmitter(kind: .beacon(key: beacon.key), identity: identity, tx: beacon.tx ?? scenario.radio.txPower,
                                                seed: scenario.seed, interval: scenario.radio.advertisingInterval))
            }
        }
        if scenario.radio.nodeBeaconInterval > 0 {
            for node in scenario.nodes {
                var random = RandomSource(seed: scenario.seed, labels: "transmit-gain", node.key)
                let tx = scenario.radio.txPower + (gains[node.key] ?? 0) + random.gaussian()
                transmitters.append(Transmitter(kind: .node(key: node.key), identity: NodeBeacon.identity(of: node.key), tx: tx,
                                                advertisedTx: scenario.radio.txPower, seed: scenario.seed, interval: scenario.radio.nodeBeaconInterval))
            }
        }
        self.transmitters = transmitters
    }

    /// The receive gain error drawn for `node` (a fixed node or a carried scanner), dB: what a
    /// perfect calibration would find. 0 for a node the scenario does not have.
    public func gain(of node: String) -> Double {
        gains[node] ?? 0
    }

    /// Everything heard from the last call up to `time` (epoch ms), in time order.
    public mutating func advance(to time: Int64) -> [Heard] {
        let until = time - start
        var heard: [Heard] = []
        for index in transmitters.indices {
            while transmitters[index].next <= until {
                let moment = transmitters[index].next
                transmit(index, at: moment, into: &heard)
                transmitters[index].scheduleNext()
            }
        }
        heard.sort { ($0.sighting.ts, $0.node, $0.sighting.id) < ($1.sighting.ts, $1.node, $1.sighting.id) }
        return heard
    }

    /// Where each person truly is at `time` (epoch ms): the beacon they dwell at, nil while
    /// walking, and absent from the result while away.
    public mutating func truth(at time: Int64) -> [String: String?] {
        var truth: [String: String?] = [:]
        for person in scenario.people {
            guard let pose = pose(of: person.user, at: time) else { continue }
            switch pose.activity {
            case .away: continue
            case .walking: truth[person.user] = .some(nil)
            case .dwelling(let beacon): truth[person.user] = .some(beacon)
            }
        }
        return truth
    }

    /// The beacon nearest each person at `time` (on the plan, floors aside), nil while they are
    /// away; people not yet arrived are left out.
    public mutating func nearestBeacons(at time: Int64) -> [String: String?] {
        var nearest: [String: String?] = [:]
        for person in scenario.people {
            guard let pose = pose(of: person.user, at: time) else { continue }
            guard pose.activity != .away else {
                nearest[person.user] = .some(nil)
                continue
            }
            var best: (key: String, distance: Double)?
            for beacon in scenario.beacons {
                let distance = (beacon.x - pose.position.x) * (beacon.x - pose.position.x) + (beacon.y - pose.position.y) * (beacon.y - pose.position.y)
                if best.map({ distance < $0.distance }) ?? true { best = (beacon.key, distance) }
            }
            nearest[person.user] = .some(best?.key)
        }
        return nearest
    }

    /// Where `user` is and what they do at `time` (epoch ms), if they are simulated.
    private mutating func pose(of user: String, at time: Int64) -> Itinerary.Pose? {
        guard var itinerary = itineraries[user] else { return nil }
        let pose = itinerary.pose(at: time - start)
        itineraries[user] = itinerary
        return pose
    }

    // MARK: Radio

    private mutating func transmit(_ index: Int, at moment: Int64, into heard: inout [Heard]) {
        let radio = scenario.radio
        switch transmitters[index].kind {
        case .tag(let user):
            guard var itinerary = itineraries[user] else { return }
            let pose = itinerary.pose(at: moment)
            itineraries[user] = itinerary
            guard pose.activity != .away else { return }
            let shared = transmitters[index].sharedShadow(at: moment, sigma: radio.sharedShadowingSigma, constant: radio.shadowingTime)
            let transmitter = transmitters[index]
            for node in scenario.nodes where receivingNodes?.contains(node.key) ?? true {
                let receiver = Scenario.Point(x: node.x, y: node.y)
                let body = blocks(pose, toward: receiver)
                receive(transmitter, from: pose.position, node: node.key, at: receiver, bodyBlocked: body, sharedShadow: shared, moment: moment, into: &heard)
            }
        case .beacon(let key):
            guard let beacon = beaconsByKey[key] else { return }
            let source = Scenario.Point(x: beacon.x, y: beacon.y)
            let shared = transmitters[index].sharedShadow(at: moment, sigma: radio.sharedShadowingSigma, constant: radio.shadowingTime)
            let transmitter = transmitters[index]
            for person in scenario.people {
                guard let scanner = person.scanner, receivingNodes?.contains(scanner) ?? true, var itinerary = itineraries[person.user] else { continue }
                let pose = itinerary.pose(at: moment)
                itineraries[person.user] = itinerary
                guard pose.activity != .away else { continue }
                let body = blocks(pose, toward: source)
                receive(transmitter, from: source, node: scanner, at: pose.position, bodyBlocked: body, sharedShadow: shared, moment: moment, into: &heard)
            }
        case .node(let key):
            guard let sender = scenario.nodes.first(where: { $0.key == key }) else { return }
            let source = Scenario.Point(x: sender.x, y: sender.y)
            let shared = transmitters[index].sharedShadow(at: moment, sigma: radio.sharedShadowingSigma, constant: radio.shadowingTime)
            let transmitter = transmitters[index]
            for node in scenario.nodes where node.key != key && receivingNodes?.contains(node.key) ?? true {
                receive(transmitter, from: source, node: node.key, at: Scenario.Point(x: node.x, y: node.y), bodyBlocked: false,
                        sharedShadow: shared, moment: moment, into: &heard)
            }
        }
    }

    /// Whether the carrier's body stands between a device worn on the chest and `point`.
    private func blocks(_ pose: Itinerary.Pose, toward point: Scenario.Point) -> Bool {
        let direction = atan2(point.y - pose.position.y, point.x - pose.position.x)
        var difference = abs(direction - pose.heading).truncatingRemainder(dividingBy: 2 * .pi)
        if difference > .pi { difference = 2 * .pi - difference }
        return difference > .pi / 2
    }

    private mutating func receive(_ transmitter: Transmitter, from source: Scenario.Point, node: String, at receiver: Scenario.Point,
                                  bodyBlocked: Bool, sharedShadow: Double, moment: Int64, into heard: inout [Heard]) {
        let radio = scenario.radio
        let id = LinkID(transmitter: transmitter.identity, node: node)
        var link = links[id] ?? LinkState(seed: scenario.seed, id: id, sigma: radio.shadowingSigma, at: moment)
        let shadow = link.shadowing.advance(to: moment, sigma: radio.shadowingSigma, constant: radio.shadowingTime, random: &link.random) + sharedShadow
        let fading = radio.fade(&link.random)
        let draw = link.random.uniform()
        links[id] = link
        guard draw >= radio.packetLoss else { return }
        let distance = max(0.1, source.distance(to: receiver))
        var mean = transmitter.tx - 10 * radio.pathLossExponent * log10(distance)
        mean -= wallLoss(from: source, to: receiver)
        if bodyBlocked { mean -= radio.bodyLoss }
        let gain = gains[node] ?? 0
        guard draw >= radio.lossShare(expected: mean + (shadow + gain)) else { return }
        let rssi = mean + (shadow + fading + gain)
        guard rssi >= radio.sensitivity else { return }
        let value = Int(min(max(rssi.rounded(), -127), 20))
        heard.append(Heard(node: node, sighting: Sighting(ts: start + moment, id: transmitter.identity, rssi: value, tx: Int(transmitter.advertisedTx.rounded()))))
    }

    private func wallLoss(from a: Scenario.Point, to b: Scenario.Point) -> Double {
        var loss = 0.0
        for wall in scenario.walls where segmentsCross(a, b, wall.from, wall.to) {
            loss += wall.loss
        }
        return loss
    }

    private func segmentsCross(_ p1: Scenario.Point, _ p2: Scenario.Point, _ q1: Scenario.Point, _ q2: Scenario.Point) -> Bool {
        func side(_ a: Scenario.Point, _ b: Scenario.Point, _ c: Scenario.Point) -> Double {
            (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
        }
        let d1 = side(q1, q2, p1), d2 = side(q1, q2, p2), d3 = side(p1, p2, q1), d4 = side(p1, p2, q2)
        return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))
    }
}
