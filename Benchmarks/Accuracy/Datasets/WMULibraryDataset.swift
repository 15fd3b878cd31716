import PresenceCore

// Dataset: BLE RSSI Dataset for Indoor localization and Navigation (UCI ML Repository id 435;
// Mohammadi & Al-Fuqaha), Waldo Library first floor, Western Michigan University,
// DOI 10.24432/C54G80, licence CC BY 4.0; copy from
// https://github.com/AftabAhmedAbro/Data-Analysis-BLE-RSSI-Indoor-Localization-and-Navigation at d4d8be8a.

/// WMU library: a phone (a carried scanner, the contract's second mode) hears 13 iBeacons
/// b3001…b3013; each row of iBeacon_RSSI_Labeled.csv is one scan with the grid cell the phone was
/// in and a timestamp to the second; -200 means not heard (the file also holds a few -199 and -198:
/// anything below -150 is taken as not heard). The file is in no useful order and spans months, so
/// rows are sorted by timestamp and cut into sessions wherever two rows are more than 10 s apart;
/// each session is a run of its own (mostly one person standing in one cell for a few scans). The
/// truth is the beacon nearest the centre of the labelled cell, from each row until the next, and
/// for the last row of a session 2 s (the usual scan interval).
enum WMULibraryDataset {
    /// Beacon positions transcribed from iBeacon_Layout.jpg, in cell units: x counts columns from
    /// the left edge of column A (A = 0 ..< 1, B = 1 ..< 2 …), y counts rows from the top edge of
    /// row 1 (row 1 = 0 ..< 1). Each beacon's cell is in the comment; the fractions are where its
    /// green dot's centre sits on the picture (grid lines found 26.85 px apart across, 26.8 px down),
    /// so that a cell halfway between two beacons still has one nearest.
    static let beacons: [(key: String, x: Double, y: Double)] = [
        ("b3001", 5.13, 8.10),   // F09, at the entrance, on the F08/F09 line
        ("b3002", 9.70, 3.37),   // J04
        ("b3003", 13.72, 3.35),  // N04
        ("b3004", 18.11, 3.36),  // S04
        ("b3005", 9.66, 6.57),   // J07
        ("b3006", 13.73, 6.57),  // N07
        ("b3007", 18.07, 6.59),  // S07
        ("b3008", 9.64, 9.56),   // J10
        ("b3009", 3.90, 14.75),  // D15
        ("b3010", 9.56, 14.79),  // J15
        ("b3011", 13.48, 14.78), // N15
        ("b3012", 17.81, 14.67), // R15
        ("b3013", 22.59, 14.72), // W15 (past the last lettered column, U)
    ]

    static let user = "reader"
    static let phone = "phone"
    /// The dataset names the beacons b3001…b3013 but not their UUID: a stand-in UUID, with the
    /// name's number as the minor.
    static func identity(_ key: String) -> String {
        "ibeacon:a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d:3:\(key.dropFirst())"
    }

    /// Rows further apart than this start a new session.
    static let sessionGap: Int64 = 10_000
    /// How long the last row of a session holds.
    static let lastScan: Int64 = 2_000

    /// One scan: when, in which cell, and the beacons heard with their RSSI.
    private struct Row {
        var time: Int64
        var cell: String
        var rssi: [(beacon: String, rssi: Int)]
    }

    static func runs(directory: String) throws(DatasetError) -> [BenchRun] {
        let path = "\(directory)/wmu-library/iBeacon_RSSI_Labeled.csv"
        let lines = try DatasetFiles.lines(path)
        guard let header = lines.first?.split(separator: ",").map({ String($0) }), header.count >= 3,
              header[0] == "location", header[1] == "date", header.dropFirst(2).allSatisfy({ key in beacons.contains { $0.key == key } }) else {
            throw DatasetError("\(path): expected the header location,date,b3001,…,b3013")
        }
        var rows: [Row] = []
        for (number, line) in lines.dropFirst().enumerated() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == header.count, let time = timestamp(fields[1]), center(of: fields[0]) != nil else {
                throw DatasetError("\(path):\(number + 2): expected a cell such as O02, a date MM-dd-yyyy HH:mm:ss and \(header.count - 2) RSSI values")
            }
            var heard: [(beacon: String, rssi: Int)] = []
            for column in 2 ..< header.count {
                guard let rssi = Int(fields[column]) else { throw DatasetError("\(path):\(number + 2): \(header[column]) is not a number") }
                if rssi > -150 { heard.append((header[column], rssi)) }
            }
            rows.append(Row(time: time, cell: String(fields[0]), rssi: heard))
        }
        rows.sort { $0.time < $1.time }

        let matcher = ObservationMatcher(registry: Registry(
            beacons: beacons.map { Registry.Beacon(key: $0.key, identity: identity($0.key)) },
            nodes: [Registry.Node(key: phone)],
            users: [Registry.User(key: user)],
            devices: [Registry.Device(identity: "node:\(phone)", user: user)]))
        var runs: [BenchRun] = []
        var session: [Row] = []
        for row in rows {
            if let previous = session.last, row.time - previous.time > sessionGap {
                runs.append(run(session, number: runs.count + 1, matcher: matcher))
                session = []
            }
            session.append(row)
        }
        if !session.isEmpty { runs.append(run(session, number: runs.count + 1, matcher: matcher)) }
        return runs
    }

    private static func run(_ rows: [Row], number: Int, matcher: ObservationMatcher) -> BenchRun {
        var matcher = matcher
        var observations: [Observation] = []
        var truth = StepTimeline<TruthState>(initial: .unknown)
        for row in rows {
            for (beacon, rssi) in row.rssi {
                let sighting = Sighting(ts: row.time, id: identity(beacon), rssi: rssi)
                if case .success(let observation) = matcher.match(sighting, node: phone, time: row.time) {
                    observations.append(observation)
                }
            }
            truth.set(nearestBeacon(to: row.cell).map { .at($0) } ?? .unknown, at: row.time)
        }
        let start = rows.first?.time ?? 0
        let end = (rows.last?.time ?? 0) + lastScan
        truth.set(.unknown, at: end)
        return BenchRun(name: "session-\(number)", observations: observations, truth: [user: truth], start: start, end: end)
    }

    /// The beacon nearest the centre of `cell` (a column letter and a row number, `O02`).
    static func nearestBeacon(to cell: String) -> String? {
        guard let center = center(of: Substring(cell)) else { return nil }
        func squared(_ beacon: (key: String, x: Double, y: Double)) -> Double {
            (beacon.x - center.x) * (beacon.x - center.x) + (beacon.y - center.y) * (beacon.y - center.y)
        }
        return beacons.min { (squared($0), $0.key) < (squared($1), $1.key) }?.key
    }

    /// The centre of a cell in the units of `beacons`.
    private static func center(of cell: Substring) -> (x: Double, y: Double)? {
        guard let letter = cell.first, let column = letter.asciiValue, (UInt8(ascii: "A") ... UInt8(ascii: "Z")).contains(column),
              let row = Int(cell.dropFirst()), row >= 1 else { return nil }
        return (Double(column - UInt8(ascii: "A")) + 0.5, Double(row) - 0.5)
    }

    /// `MM-dd-yyyy HH:mm:ss` as ms since the epoch, read as UTC (only differences matter).
    private static func timestamp(_ text: Substring) -> Int64? {
        let parts = text.split { $0 == "-" || $0 == " " || $0 == ":" }.compactMap { Int($0) }
        guard parts.count == 6 else { return nil }
        let (month, day, year, hour, minute, second) = (parts[0], parts[1], parts[2], parts[3], parts[4], parts[5])
        guard (1 ... 12).contains(month), (1 ... 31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        // Days from 1970-01-01 to a civil date (H. Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Int64(((days * 24 + hour) * 60 + minute) * 60 + second) * 1000
    }
}
