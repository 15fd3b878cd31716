import PresenceCore

/// Self-calibration against the truth: one venue whose node gains are drawn from ±4 dB, scored
/// three times over the same sightings: with the gains unknown (no offsets), with the true gains
/// registered (what a perfect calibration gives), and with the offsets the aggregator's
/// `SelfCalibration` fits from the first minutes of node-to-node sightings (every node transmits its node beacon each
/// second; no truth is used). Held out: seeds of its own.
enum CalibrationExperiment {
    /// The prefix of every variant's name.
    static let prefix = "calib "
    /// How long the node links are listened to before the fit.
    static let listening: Int64 = 5 * 60_000

    /// The three variants, in report order.
    enum Variant: String, CaseIterable {
        case unknown = "gains unknown"
        case fitted = "node-link fit"
        case known = "true gains"
    }

    static func scenarios(quick: Bool) -> [BenchScenario] {
        let size = SimulatedVenues.Size(quick: quick)
        var radio = ChannelGrid.radio([.gains])
        radio.shadowingSigma = 4
        radio.nodeBeaconInterval = 1_000
        let seeds = SimulatedVenues.Seeds(world: 51, visitors: 51)
        let venue = SimulatedVenues.expo(booths: SimulatedVenues.boothGrid(columns: 6, rows: 4, gaps: 4 ... 5, seed: 51), radio: radio, size: size, seeds: seeds)
        let note = "dense expo: 24 booths 4–5 m apart, node gains uniform in ±4 dB, shadowing σ 4 dB, nodes transmitting node beacons every 1 s; \(size.people) people for \(DurationText.format(size.duration)); seed 51"
        return Variant.allCases.map { variant in
            let name = prefix + "expo4-5 gain±4 " + variant.rawValue
            return BenchScenario(name: name, note: note + "; " + describe(variant), dataset: nil, heldOut: true) {
                [try SimulatedRecording.run(venue, name: name, duration: size.duration, offsets: try offsets(variant, venue: venue))]
            }
        }
    }

    /// The share of the accuracy gap between the unknown and the true gains that the fit recovers,
    /// from the engine's rows (nil when the variants were not all scored or there is no gap).
    static func recovered(_ rows: [ResultRow], method: String) -> (unknown: Double, fitted: Double, known: Double, share: Double?)? {
        func accuracy(_ variant: Variant) -> Double? {
            rows.first { $0.method == method && $0.scenario.hasPrefix(prefix) && $0.scenario.hasSuffix(variant.rawValue) }?.tally.accuracy
        }
        guard let unknown = accuracy(.unknown), let fitted = accuracy(.fitted), let known = accuracy(.known) else { return nil }
        return (unknown, fitted, known, known - unknown > 0.0001 ? (fitted - unknown) / (known - unknown) : nil)
    }

    private static func describe(_ variant: Variant) -> String {
        switch variant {
        case .unknown: "no offsets registered"
        case .fitted: "offsets fitted from the first \(DurationText.format(listening)) of node-to-node sightings"
        case .known: "each node registered with its true gain"
        }
    }

    private static func offsets(_ variant: Variant, venue: Scenario) throws -> [String: Double] {
        switch variant {
        case .unknown:
            return [:]
        case .known:
            let simulator = try VenueSimulator(scenario: venue, start: SimulatedRecording.epoch)
            return Dictionary(uniqueKeysWithValues: venue.nodes.map { ($0.key, -simulator.gain(of: $0.key)) })
        case .fitted:
            // As `presence-aggregator --self-calibrate` fits them, once, at the end of the listening.
            var simulator = try VenueSimulator(scenario: venue, start: SimulatedRecording.epoch)
            var calibration = SelfCalibration(registry: SimulatedRecording.registry(of: venue), start: SimulatedRecording.epoch)
            for heard in simulator.advance(to: SimulatedRecording.epoch + listening) {
                _ = calibration.take(identity: heard.sighting.id, heardBy: heard.node, rssi: heard.sighting.rssi, tx: heard.sighting.tx)
            }
            return calibration.refit(at: SimulatedRecording.epoch + listening) ?? [:]
        }
    }
}
