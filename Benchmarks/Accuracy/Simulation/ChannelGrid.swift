import PresenceCore

/// A grid of channel models, for choosing engine defaults by the cell they do worst in: each
/// cell is a venue and one level of each of five channel factors, twelve cells of a fractional
/// design (in each venue every factor is mild in two cells and harsh in two; over the grid every
/// two factors meet in all four combinations). Held out from the `sim` scenarios: other seeds,
/// other itineraries, and each cell has its own.
enum ChannelGrid {
    /// The prefix of every cell's name.
    static let prefix = "grid "

    /// The venues the grid varies.
    enum Venue: String {
        /// The `sim expo` hall: 20 booths 7 m apart.
        case expo7
        /// A denser hall: 24 booths 4–5 m apart.
        case expo45 = "expo4-5"
        /// The `sim office`: eight rooms with walls.
        case office
    }

    /// The harsh levels of a cell; a factor left out is at its mild level.
    struct Harsh: OptionSet {
        let rawValue: Int
        /// Node gains uniform in ±4 dB (mild: none).
        static let gains = Harsh(rawValue: 1)
        /// Shadowing σ 6 dB per link and 3 dB shared by a tag's links (mild: σ 2 dB per link).
        static let shadowing = Harsh(rawValue: 2)
        /// Body loss 10 dB, dwellers turning every 8 s on average (mild: 6 dB, facing the booth).
        static let turning = Harsh(rawValue: 4)
        /// Rayleigh fading (mild: gaussian σ 2 dB).
        static let rayleigh = Harsh(rawValue: 8)
        /// 10 % loss plus loss near a -92 dBm floor, 3 dB wide (mild: a flat 30 % above -100 dBm).
        static let floorLoss = Harsh(rawValue: 16)
    }

    /// One cell: a venue, the factors at their harsh level, and the seed of its world and visitors.
    struct Cell {
        var venue: Venue
        var harsh: Harsh
        var seed: UInt64
    }

    static let cells: [Cell] = [
        Cell(venue: .expo7, harsh: [.turning], seed: 31),
        Cell(venue: .expo7, harsh: [.turning, .rayleigh, .floorLoss], seed: 32),
        Cell(venue: .expo7, harsh: [.gains, .shadowing, .floorLoss], seed: 33),
        Cell(venue: .expo7, harsh: [.gains, .shadowing, .rayleigh], seed: 34),
        Cell(venue: .expo45, harsh: [], seed: 35),
        Cell(venue: .expo45, harsh: [.rayleigh, .floorLoss], seed: 36),
        Cell(venue: .expo45, harsh: [.gains, .shadowing, .turning], seed: 37),
        Cell(venue: .expo45, harsh: [.gains, .shadowing, .turning, .rayleigh, .floorLoss], seed: 38),
        Cell(venue: .office, harsh: [.shadowing, .floorLoss], seed: 39),
        Cell(venue: .office, harsh: [.shadowing, .turning, .rayleigh], seed: 40),
        Cell(venue: .office, harsh: [.gains, .rayleigh], seed: 41),
        Cell(venue: .office, harsh: [.gains, .turning, .floorLoss], seed: 42),
    ]

    static func scenarios(quick: Bool) -> [BenchScenario] {
        let size = SimulatedVenues.Size(quick: quick)
        let people = "\(size.people) people for \(DurationText.format(size.duration))"
        return cells.map { cell in
            let name = prefix + ([cell.venue.rawValue] + levels(cell.harsh).map(\.name)).joined(separator: " ")
            let note = ([venueNote(cell.venue)] + levels(cell.harsh).map(\.note) + [people, "seed \(cell.seed)"]).joined(separator: "; ")
            let scenario = venue(cell.venue, radio: radio(cell.harsh), size: size, seed: cell.seed)
            return BenchScenario(name: name, note: note, dataset: nil, heldOut: true) { [try SimulatedRecording.run(scenario, name: name, duration: size.duration)] }
        }
    }

    /// The radio of a cell: the default one with each factor set to its level.
    static func radio(_ harsh: Harsh) -> Scenario.Radio {
        var radio = Scenario.Radio()
        radio.nodeGainSigma = 0
        radio.nodeGainSpread = harsh.contains(.gains) ? 4 : 0
        radio.shadowingSigma = harsh.contains(.shadowing) ? 6 : 2
        radio.sharedShadowingSigma = harsh.contains(.shadowing) ? 3 : 0
        radio.bodyLoss = harsh.contains(.turning) ? 10 : 6
        radio.turnInterval = harsh.contains(.turning) ? 8_000 : 0
        radio.fading = harsh.contains(.rayleigh) ? .rayleigh : .gaussian
        if harsh.contains(.floorLoss) {
            radio.packetLoss = 0.1
            radio.lossFadeWidth = 3
            radio.sensitivity = -92
        }
        return radio
    }

    /// Each factor's level in a cell: a short name for the cell's name and a note for the report.
    private static func levels(_ harsh: Harsh) -> [(name: String, note: String)] {
        [
            harsh.contains(.gains) ? ("gain±4", "node gains uniform in ±4 dB") : ("gain0", "no node gain error"),
            harsh.contains(.shadowing) ? ("σ6+3", "shadowing σ 6 dB per link + 3 dB shared (5 s)") : ("σ2", "shadowing σ 2 dB per link (5 s)"),
            harsh.contains(.turning) ? ("turn10", "body 10 dB, turning every ~8 s") : ("face6", "body 6 dB, facing the booth"),
            harsh.contains(.rayleigh) ? ("rayleigh", "Rayleigh fading") : ("gauss2", "fading σ 2 dB"),
            harsh.contains(.floorLoss) ? ("loss10+fade", "10 % loss + loss near a -92 dBm floor (3 dB wide)") : ("loss30", "30 % loss"),
        ]
    }

    private static func venueNote(_ venue: Venue) -> String {
        switch venue {
        case .expo7: "expo: 20 booths 7 m apart (5×4), dwells 20–120 s"
        case .expo45: "dense expo: 24 booths 4–5 m apart (6×4), dwells 20–120 s"
        case .office: "office: 8 rooms with 6 dB walls, dwells 30–300 s"
        }
    }

    private static func venue(_ venue: Venue, radio: Scenario.Radio, size: SimulatedVenues.Size, seed: UInt64) -> Scenario {
        let seeds = SimulatedVenues.Seeds(world: seed, visitors: seed)
        switch venue {
        case .expo7:
            return SimulatedVenues.expo(booths: SimulatedVenues.boothGrid(columns: 5, rows: 4, gaps: 7 ... 7, seed: seed), radio: radio, size: size, seeds: seeds)
        case .expo45:
            return SimulatedVenues.expo(booths: SimulatedVenues.boothGrid(columns: 6, rows: 4, gaps: 4 ... 5, seed: seed), radio: radio, size: size, seeds: seeds)
        case .office:
            return SimulatedVenues.office(size: size, radio: radio, seeds: seeds)
        }
    }
}
