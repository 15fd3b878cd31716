import PresenceCore

// Dataset: SAL-Autarkic-Localization-RSSI-BLE-Dataset (SAL-RB), AVL List GmbH automotive testbed,
// Graz, https://github.com/juliankaroliny/SAL-Autarkic-Localization-RSSI-BLE-Dataset at 440a5bcf,
// licence CC BY 4.0 (stated in its README.md).

/// SAL door: 10 sniffer nodes inside (I-*) and outside (O-*) a test chamber hear one measurement
/// node once per 100 ms superframe (-100 = not heard). Two beacons stand for the zones, `inside`
/// and `outside`, with the I-* nodes anchored inside and the O-* nodes outside (positions from
/// measurement_config.txt). Time is the superframe index × 100 ms. The truth is the photosensor
/// label of each superframe, holding until the next row: 0 outside, 1 inside, 2 inside on the test
/// position. Each CSV file is a run of its own; the measurement node is one stand-in device
/// (the dataset names none).
enum SalDoorDataset {
    /// `car` or `walk`: the files whose name starts with it.
    static func runs(directory: String, kind: String) throws(DatasetError) -> [BenchRun] {
        let folder = "\(directory)/sal-door"
        let nodes = try readNodes("\(folder)/measurement_config.txt")
        let registry = Registry(
            beacons: [Registry.Beacon(key: "inside"), Registry.Beacon(key: "outside")],
            nodes: nodes,
            users: [Registry.User(key: user)],
            devices: [Registry.Device(identity: device, user: user)])
        let matcher = ObservationMatcher(registry: registry)
        let names = try DatasetFiles.names(in: "\(folder)/Dataset", ending: ".csv").filter { $0.hasPrefix(kind + "_") }
        guard !names.isEmpty else { throw DatasetError("\(folder)/Dataset: no \(kind)_*.csv file") }
        var runs: [BenchRun] = []
        for name in names {
            runs.append(try run("\(folder)/Dataset/\(name)", name: String(name.dropLast(4)), matcher: matcher))
        }
        return runs
    }

    static let user = "mover"
    /// A locally administered address standing in for the measurement node.
    static let device = "mac:02:00:00:00:00:01"
    /// Superframe 0 is at this epoch time (the dataset gives no clock).
    static let epoch: Int64 = 1_600_000_000_000

    /// `Label,Description,X,Y,Z` rows: I-* nodes anchored to `inside`, O-* to `outside`.
    private static func readNodes(_ path: String) throws(DatasetError) -> [Registry.Node] {
        var nodes: [Registry.Node] = []
        for (number, line) in try DatasetFiles.lines(path).enumerated() where !line.hasPrefix("Label,") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == 5, let x = Double(fields[2]), let y = Double(fields[3]), fields[0].hasPrefix("I-") || fields[0].hasPrefix("O-") else {
                throw DatasetError("\(path):\(number + 1): expected I-*/O-* label,description,x,y,z")
            }
            nodes.append(Registry.Node(key: fields[0].lowercased(), beacon: fields[0].hasPrefix("I-") ? "inside" : "outside", x: x, y: y))
        }
        guard nodes.contains(where: { $0.beacon == "inside" }), nodes.contains(where: { $0.beacon == "outside" }) else {
            throw DatasetError("\(path): expected nodes both inside (I-*) and outside (O-*)")
        }
        return nodes
    }

    private static func run(_ path: String, name: String, matcher: ObservationMatcher) throws(DatasetError) -> BenchRun {
        var matcher = matcher
        let lines = try DatasetFiles.lines(path)
        guard let header = lines.first?.split(separator: ",").map({ String($0) }),
              let labelColumn = header.firstIndex(of: "Label"), header.first == "superframe" else {
            throw DatasetError("\(path): expected a header starting with 'superframe' and holding 'Label'")
        }
        let nodeColumns = header.indices.filter { header[$0].hasPrefix("I-") || header[$0].hasPrefix("O-") }
        var observations: [Observation] = []
        var truth = StepTimeline<TruthState>(initial: .unknown)
        var first: Int64?
        var last: Int64 = 0
        for (number, line) in lines.dropFirst().enumerated() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == header.count, let superframe = Int64(fields[0]), let label = Int(fields[labelColumn]), (0 ... 2).contains(label) else {
                throw DatasetError("\(path):\(number + 2): expected \(header.count) fields, a superframe number and a label 0, 1 or 2")
            }
            let time = epoch + superframe * 100
            guard time > last else { throw DatasetError("\(path):\(number + 2): superframe \(superframe) does not follow the previous one") }
            first = first ?? time
            last = time
            truth.set(.at(label == 0 ? "outside" : "inside"), at: time)
            for column in nodeColumns {
                guard let rssi = Int(fields[column]) else { throw DatasetError("\(path):\(number + 2): \(header[column]) is not a number") }
                guard rssi != -100 else { continue }
                let sighting = Sighting(ts: time, id: device, rssi: rssi)
                if case .success(let observation) = matcher.match(sighting, node: header[column].lowercased(), time: time) {
                    observations.append(observation)
                }
            }
        }
        guard let first else { throw DatasetError("\(path): no rows") }
        truth.set(.unknown, at: last + 100)
        return BenchRun(name: name, observations: observations, truth: [user: truth], start: first, end: last + 100)
    }
}
