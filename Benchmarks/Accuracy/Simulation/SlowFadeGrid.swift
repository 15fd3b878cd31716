import PresenceCore

/// Cells where fades last as long as they do on a real floor: shadowing that drifts for seconds
/// to tens of seconds, and bodies that stay turned away from the nodes behind them for tens of
/// seconds, which the channel grid's 5 s shadowing and 8 s turns leave out. Each cell is a venue
/// and a radio scored over three seeds of its own, held out (`grid slow …`); a fourth seed of
/// each is in the tuning part (`sim slow …`), so that defaults are chosen on other worlds and
/// other visitors than they are reported on.
enum SlowFadeGrid {
    /// One cell: its name, what its radio is, and its venue with that radio.
    struct Cell {
        var name: String
        var note: String
        var venue: Venue
        var radio: Scenario.Radio
        /// How far from their booth visitors stand, m.
        var offset = 1.0
    }

    /// The venues the cells use.
    enum Venue {
        /// A small hall: 8 booths 5–8 m apart (4×2).
        case hall8
        /// The grid's dense expo: 24 booths 4–5 m apart (6×4).
        case expo45
        /// The grid's expo: 20 booths 7 m apart (5×4).
        case expo7
        /// The grid's office: eight rooms with 6 dB walls.
        case office
    }

    /// Seeds scored in the reporting part, and the one in the tuning part.
    static let heldOutSeeds: [UInt64] = [51, 52, 53]
    static let tuningSeed: UInt64 = 50

    static let cells: [Cell] = [
        Cell(name: "hall8 gain±4 σ5+3/4s body6/30s gauss2 loss30",
             note: "hall: 8 booths 5–8 m apart (4×2), dwells 20–120 s; node gains uniform in ±4 dB; shadowing σ 5 dB per link + 3 dB shared, correlated over 4 s; body 6 dB, turning every ~30 s; fading σ 2 dB; 30 % loss",
             venue: .hall8, radio: radio(gainSpread: 4, shadowing: 5, shared: 3, shadowingTime: 4_000, body: 6, turn: 30_000)),
        Cell(name: "expo4-5 gain±4 σ4+2/20s body6/40s rayleigh loss10+fade",
             note: "dense expo: 24 booths 4–5 m apart (6×4), dwells 20–120 s; node gains uniform in ±4 dB; shadowing σ 4 dB per link + 2 dB shared, correlated over 20 s; body 6 dB, turning every ~40 s; Rayleigh fading; 10 % loss + loss near a -92 dBm floor",
             venue: .expo45, radio: radio(gainSpread: 4, shadowing: 4, shared: 2, shadowingTime: 20_000, body: 6, turn: 40_000, rayleigh: true, floorLoss: true)),
        Cell(name: "office gain±4 σ6+3/15s body10/30s gauss2 loss30",
             note: "office: 8 rooms with 6 dB walls, dwells 30–300 s; node gains uniform in ±4 dB; shadowing σ 6 dB per link + 3 dB shared, correlated over 15 s; body 10 dB, turning every ~30 s; fading σ 2 dB; 30 % loss",
             venue: .office, radio: radio(gainSpread: 4, shadowing: 6, shared: 3, shadowingTime: 15_000, body: 10, turn: 30_000)),
        Cell(name: "hall8 stand2m adv4Hz gain±4 σ4+3/6s body6/30s gauss2 loss30",
             note: "hall: 8 booths 5–8 m apart (4×2), visitors standing 2 m from the booth, dwells 20–120 s; tags advertising 4 times a second; node gains uniform in ±4 dB; shadowing σ 4 dB per link + 3 dB shared, correlated over 6 s; body 6 dB, turning every ~30 s; fading σ 2 dB; 30 % loss",
             venue: .hall8, radio: radio(gainSpread: 4, shadowing: 4, shared: 3, shadowingTime: 6_000, body: 6, turn: 30_000, advertising: 250), offset: 2),
        Cell(name: "expo7 gain0 σ6/30s body8/20s rayleigh loss30",
             note: "expo: 20 booths 7 m apart (5×4), dwells 20–120 s; no node gain error; shadowing σ 6 dB per link, correlated over 30 s; body 8 dB, turning every ~20 s; Rayleigh fading; 30 % loss",
             venue: .expo7, radio: radio(gainSpread: 0, shadowing: 6, shared: 0, shadowingTime: 30_000, body: 8, turn: 20_000, rayleigh: true)),
    ]

    /// The held-out cells (three seeds each, in the channel grid) or the tuning ones (one seed each).
    static func scenarios(quick: Bool, heldOut: Bool) -> [BenchScenario] {
        let size = size(quick: quick)
        let seeds = heldOut ? heldOutSeeds : [tuningSeed]
        let prefix = heldOut ? ChannelGrid.prefix + "slow " : "sim slow "
        return cells.map { cell in
            let name = prefix + cell.name
            let note = "\(cell.note); \(size.people) people for \(DurationText.format(size.duration)) per seed; seeds \(seeds.map(String.init).joined(separator: ", "))"
            return BenchScenario(name: name, note: note, dataset: nil, heldOut: heldOut) {
                try seeds.map { seed in
                    try SimulatedRecording.run(venue(cell, size: size, seed: seed), name: "\(name) seed \(seed)", duration: size.duration)
                }
            }
        }
    }

    /// How big each seed's simulation is: 20 people for an hour, or 8 for 20 minutes with `--quick`.
    private static func size(quick: Bool) -> SimulatedVenues.Size {
        var size = SimulatedVenues.Size(quick: quick)
        if !quick { size.duration = 3_600_000 }
        return size
    }

    private static func radio(gainSpread: Double, shadowing: Double, shared: Double, shadowingTime: Int64, body: Double, turn: Int64,
                              rayleigh: Bool = false, floorLoss: Bool = false, advertising: Int64 = 1_000) -> Scenario.Radio {
        var radio = Scenario.Radio()
        radio.advertisingInterval = advertising
        radio.nodeGainSigma = 0
        radio.nodeGainSpread = gainSpread
        radio.shadowingSigma = shadowing
        radio.sharedShadowingSigma = shared
        radio.shadowingTime = shadowingTime
        radio.bodyLoss = body
        radio.turnInterval = turn
        radio.fading = rayleigh ? .rayleigh : .gaussian
        if floorLoss {
            radio.packetLoss = 0.1
            radio.lossFadeWidth = 3
            radio.sensitivity = -92
        }
        return radio
    }

    private static func venue(_ cell: Cell, size: SimulatedVenues.Size, seed: UInt64) -> Scenario {
        let seeds = SimulatedVenues.Seeds(world: seed, visitors: seed)
        func expo(columns: Int, rows: Int, gaps: ClosedRange<Double>) -> Scenario {
            SimulatedVenues.expo(booths: SimulatedVenues.boothGrid(columns: columns, rows: rows, gaps: gaps, seed: seed), radio: cell.radio, size: size,
                                 offset: cell.offset, seeds: seeds)
        }
        switch cell.venue {
        case .hall8: return expo(columns: 4, rows: 2, gaps: 5 ... 8)
        case .expo45: return expo(columns: 6, rows: 4, gaps: 4 ... 5)
        case .expo7: return expo(columns: 5, rows: 4, gaps: 7 ... 7)
        case .office: return SimulatedVenues.office(size: size, radio: cell.radio, seeds: seeds)
        }
    }
}
