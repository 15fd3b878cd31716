// Scenario files leave out whatever has a sensible default, and write durations either as
// milliseconds or as text such as "20s"; the synthesised Decodable would require every key.

extension Scenario {
    private enum Keys: String, CodingKey {
        case venue, seed, radio, walls, beacons, nodes, people
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        venue = try c.decode(String.self, forKey: .venue)
        seed = try c.decodeIfPresent(UInt64.self, forKey: .seed) ?? 1
        radio = try c.decodeIfPresent(Radio.self, forKey: .radio) ?? Radio()
        walls = try c.decodeIfPresent([Wall].self, forKey: .walls) ?? []
        beacons = try c.decode([Beacon].self, forKey: .beacons)
        nodes = try c.decode([Node].self, forKey: .nodes)
        people = try c.decodeIfPresent([Person].self, forKey: .people) ?? []
    }
}

extension Scenario.Radio {
    private enum Keys: String, CodingKey {
        case pathLossExponent, shadowingSigma, shadowingTime, fadingSigma, packetLoss, bodyLoss, nodeGainSigma, sensitivity, txPower, advertisingInterval
        case lossFadeWidth, turnInterval, sharedShadowingSigma, fading, nodeGainSpread, nodeBeaconInterval
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let d = Self()
        pathLossExponent = try c.decodeIfPresent(Double.self, forKey: .pathLossExponent) ?? d.pathLossExponent
        shadowingSigma = try c.decodeIfPresent(Double.self, forKey: .shadowingSigma) ?? d.shadowingSigma
        shadowingTime = try c.decodeDuration(.shadowingTime) ?? d.shadowingTime
        fadingSigma = try c.decodeIfPresent(Double.self, forKey: .fadingSigma) ?? d.fadingSigma
        packetLoss = try c.decodeIfPresent(Double.self, forKey: .packetLoss) ?? d.packetLoss
        bodyLoss = try c.decodeIfPresent(Double.self, forKey: .bodyLoss) ?? d.bodyLoss
        nodeGainSigma = try c.decodeIfPresent(Double.self, forKey: .nodeGainSigma) ?? d.nodeGainSigma
        sensitivity = try c.decodeIfPresent(Double.self, forKey: .sensitivity) ?? d.sensitivity
        txPower = try c.decodeIfPresent(Double.self, forKey: .txPower) ?? d.txPower
        advertisingInterval = try c.decodeDuration(.advertisingInterval) ?? d.advertisingInterval
        lossFadeWidth = try c.decodeIfPresent(Double.self, forKey: .lossFadeWidth) ?? d.lossFadeWidth
        turnInterval = try c.decodeDuration(.turnInterval) ?? d.turnInterval
        nodeBeaconInterval = try c.decodeDuration(.nodeBeaconInterval) ?? d.nodeBeaconInterval
        sharedShadowingSigma = try c.decodeIfPresent(Double.self, forKey: .sharedShadowingSigma) ?? d.sharedShadowingSigma
        fading = d.fading
        if let name = try c.decodeIfPresent(String.self, forKey: .fading) {
            guard let model = Fading(rawValue: name) else {
                let known = Fading.allCases.map(\.rawValue).joined(separator: " or ")
                throw DecodingError.dataCorruptedError(forKey: .fading, in: c, debugDescription: "fading '\(name)' is not known: expected \(known)")
            }
            fading = model
        }
        nodeGainSpread = try c.decodeIfPresent(Double.self, forKey: .nodeGainSpread) ?? d.nodeGainSpread
    }
}

extension Scenario.Person {
    private enum Keys: String, CodingKey {
        case user, device, scanner, arrive, entrance, speed, stops, repeats, away, tx
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        user = try c.decode(String.self, forKey: .user)
        device = try c.decodeIfPresent(String.self, forKey: .device)
        scanner = try c.decodeIfPresent(String.self, forKey: .scanner)
        arrive = try c.decodeDuration(.arrive) ?? 0
        entrance = try c.decode(Scenario.Point.self, forKey: .entrance)
        speed = try c.decodeIfPresent(Double.self, forKey: .speed) ?? 1.2
        stops = try c.decode([Scenario.Stop].self, forKey: .stops)
        repeats = try c.decodeIfPresent(Bool.self, forKey: .repeats) ?? false
        away = try c.decodeDuration(.away) ?? 20_000
        tx = try c.decodeIfPresent(Double.self, forKey: .tx)
    }
}

extension Scenario.Stop {
    private enum Keys: String, CodingKey {
        case beacon, dwell, offset
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        beacon = try c.decode(String.self, forKey: .beacon)
        guard let dwell = try c.decodeDuration(.dwell) else {
            throw DecodingError.keyNotFound(Keys.dwell, .init(codingPath: c.codingPath, debugDescription: "a stop needs a dwell time"))
        }
        self.dwell = dwell
        offset = try c.decodeIfPresent(Double.self, forKey: .offset) ?? 1.0
    }
}

extension KeyedDecodingContainer {
    /// A duration written as milliseconds (a number) or as text ("20s", "500ms", "2m").
    func decodeDuration(_ key: Key) throws -> Int64? {
        if let number = try? decodeIfPresent(Int64.self, forKey: key) { return number }
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        do {
            return try DurationText.milliseconds(text, what: key.stringValue)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: error.message)
        }
    }
}
