import Foundation
import PresenceCore

// Dataset: Position Annotated BLE RSSI Dataset for Indoor Localization ("TETAM" area, Bogazici
// University), https://github.com/philotuxo/Position-Annotated-BLE-RSSI-Dataset at 77474b69,
// licence CC0 1.0 Universal (LICENSE.md in the data folder). The authors ask to be cited:
// Danis et al., Pervasive and Mobile Computing 81 (2022); Danis, Cemgil, Ersoy, IEEE Access 9 (2021).

/// TETAM: 12 fixed sensors of two receiver types (Raspberry Pi radios at 1.22 m, USB dongles at
/// 2.30 m) hear one carried beacon; every line of a track (`trk/*_all_sensors.mbd`:
/// `<unix ts>,<sensor mac>,<beacon mac>,<rssi>,<x>,<y>,<z>,<3×3 orientation>`) is one sighting
/// with the camera-measured beacon position. Each sensor is a node anchored to a beacon of its own
/// (`sensors`), or to its group's zone, sensor1x, 2x, 3x, 4x (`zones`). The truth is the sensor
/// nearest the camera position in 3D (the sensors hang at two heights, the beacon is carried at
/// about 1.8 m), or that sensor's zone, changing at each line. Each track is a run of its own.
///
/// With `calibrated`, each node gets the RSSI offset an operator's calibration walk would give it:
/// the offset that evens out the sensors' mean of rssi + 20·log10(distance) over all tracks
/// (path-loss exponent 2). The receivers differ by several dB (the Raspberry Pi radios read about
/// 4.5 dB below the dongles, sensor41 about 4 dB above the other dongles). The offsets are fitted
/// on the tuning part's tracks only (the even-numbered ones), as a walk on another day would fit
/// them, so the held-out tracks are scored with offsets they did not give.
enum TETAMDataset {
    /// What the sensors' nodes are anchored to.
    enum Grouping {
        case sensors
        case zones
    }

    /// A `<mac>: [[x, y, z], colour, alias]` entry of tetam.dev.
    private struct Dongle: Decodable {
        var position: [Double]
        var alias: String

        init(from decoder: any Decoder) throws {
            var fields = try decoder.unkeyedContainer()
            position = try fields.decode([Double].self)
            _ = try fields.decode(Int.self)
            alias = try fields.decode(String.self)
        }
    }

    /// A fixed sensor: its name (`sensor10` … `sensor42`) and position, m.
    private struct Sensor {
        var alias: String
        var position: [Double]

        /// `sensor10` … `sensor42`: the group is the first digit.
        var zone: String { "zone\(alias.dropFirst(6).prefix(1))" }
    }

    /// One line of a track.
    private struct Line {
        var time: Int64
        var sensor: Sensor
        var beacon: String
        var rssi: Int
        var position: [Double]
    }

    static func runs(directory: String, grouping: Grouping, calibrated: Bool) throws(DatasetError) -> [BenchRun] {
        let folder = "\(directory)/tetam"
        let sensors = try readSensors("\(folder)/cnf/tetam.dev")
        var tracks: [(name: String, lines: [Line])] = []
        for name in try DatasetFiles.names(in: "\(folder)/trk", ending: "_all_sensors.mbd") {
            tracks.append((String(name.dropLast("_all_sensors.mbd".count)), try readTrack("\(folder)/trk/\(name)", sensors: sensors)))
        }
        guard !tracks.isEmpty else { throw DatasetError("\(folder)/trk: no *_all_sensors.mbd track") }
        let tuningTracks = tracks.enumerated().filter { AccuracyOptions.isTuningRun($0.offset) }.map(\.element)
        let offsets = calibrated ? calibration(tuningTracks.flatMap(\.lines)) : [:]
        return tracks.map { run($0.lines, name: $0.name, sensors: sensors, grouping: grouping, offsets: offsets) }
    }

    /// Sensors by MAC, from the `Dongles:{…}` line of tetam.dev.
    private static func readSensors(_ path: String) throws(DatasetError) -> [String: Sensor] {
        guard let line = try DatasetFiles.lines(path).first(where: { $0.hasPrefix("Dongles:") }) else {
            throw DatasetError("\(path): no 'Dongles:' line")
        }
        let dongles: [String: Dongle]
        do {
            dongles = try JSONDecoder().decode([String: Dongle].self, from: Data(line.dropFirst("Dongles:".count).utf8))
        } catch {
            throw DatasetError("\(path): the Dongles line is not {mac: [[x, y, z], colour, alias]}: \(error)")
        }
        var sensors: [String: Sensor] = [:]
        for (mac, dongle) in dongles {
            guard dongle.position.count == 3, dongle.alias.hasPrefix("sensor"), dongle.alias.count == 8 else {
                throw DatasetError("\(path): sensor \(mac) has position \(dongle.position) and alias '\(dongle.alias)': expected [x, y, z] and sensorNN")
            }
            sensors[mac] = Sensor(alias: dongle.alias, position: dongle.position)
        }
        return sensors
    }

    /// A track's lines in time order.
    private static func readTrack(_ path: String, sensors: [String: Sensor]) throws(DatasetError) -> [Line] {
        var lines: [Line] = []
        for (number, text) in try DatasetFiles.lines(path).enumerated() {
            let fields = text.split(separator: ",")
            guard fields.count >= 7, let seconds = Double(fields[0]), let sensor = sensors[String(fields[1])], let rssi = Int(fields[3]),
                  let x = Double(fields[4]), let y = Double(fields[5]), let z = Double(fields[6]), fields[2].count == 12 else {
                throw DatasetError("\(path):\(number + 1): expected <unix ts>,<known sensor mac>,<beacon mac>,<rssi>,<x>,<y>,<z>,…")
            }
            lines.append(Line(time: Int64((seconds * 1000).rounded()), sensor: sensor, beacon: String(fields[2]), rssi: rssi, position: [x, y, z]))
        }
        guard !lines.isEmpty else { throw DatasetError("\(path): no sightings") }
        return lines.sorted { $0.time < $1.time }
    }

    /// Each sensor's RSSI offset, dB: the mean over sensors of rssi + 20·log10(distance), minus the
    /// sensor's own mean.
    private static func calibration(_ lines: [Line]) -> [String: Double] {
        var sums: [String: (total: Double, count: Int)] = [:]
        for line in lines {
            let level = Double(line.rssi) + 20 * log10(max(0.1, distance(line.sensor.position, line.position)))
            sums[line.sensor.alias, default: (0, 0)].total += level
            sums[line.sensor.alias, default: (0, 0)].count += 1
        }
        let means = sums.mapValues { $0.total / Double($0.count) }
        let overall = means.values.reduce(0, +) / Double(max(1, means.count))
        return means.mapValues { overall - $0 }
    }

    private static func run(_ lines: [Line], name: String, sensors: [String: Sensor], grouping: Grouping, offsets: [String: Double]) -> BenchRun {
        let place: (Sensor) -> String = { grouping == .sensors ? $0.alias : $0.zone }
        let device = { (mac: String) in "mac:" + stride(from: 0, to: 12, by: 2).map { String(mac.dropFirst($0).prefix(2)) }.joined(separator: ":") }
        let user = "carrier"
        let registry = Registry(
            beacons: Set(sensors.values.map(place)).map { Registry.Beacon(key: $0) },
            nodes: sensors.values.map {
                Registry.Node(key: $0.alias, beacon: place($0), x: $0.position[0], y: $0.position[1], rssiOffset: offsets[$0.alias] ?? 0)
            },
            users: [Registry.User(key: user)],
            devices: Set(lines.map(\.beacon)).map { Registry.Device(identity: device($0), user: user) })
        var matcher = ObservationMatcher(registry: registry)

        var observations: [Observation] = []
        var truth = StepTimeline<TruthState>(initial: .unknown)
        for line in lines {
            let sighting = Sighting(ts: line.time, id: device(line.beacon), rssi: line.rssi)
            if case .success(let observation) = matcher.match(sighting, node: line.sensor.alias, time: line.time) {
                observations.append(observation)
            }
            let nearest = sensors.values.min {
                (distance($0.position, line.position), $0.alias) < (distance($1.position, line.position), $1.alias)
            }
            truth.set(nearest.map { .at(place($0)) } ?? .unknown, at: line.time)
        }
        let start = lines.first?.time ?? 0
        let end = (lines.last?.time ?? 0) + 1
        truth.set(.unknown, at: end)
        return BenchRun(name: name, observations: observations, truth: [user: truth], start: start, end: end)
    }

    private static func distance(_ a: [Double], _ b: [Double]) -> Double {
        zip(a, b).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }.squareRoot()
    }
}
