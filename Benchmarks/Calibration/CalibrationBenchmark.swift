import Foundation
import PresenceCore

/// How long one self-calibration fit takes as venues grow (`NodeLinkCalibration.fit`, which the
/// aggregator runs in its decision loop once a minute with `--self-calibrate`): nodes on a 6 m
/// grid, each hearing the node beacons of the nodes within 20 m, 300 readings a link (the most the
/// fit keeps), node gains drawn from ±4 dB and 4 dB of noise. With `--floors K`, the nodes are
/// spread over K floors of the same grid (a node hears the nodes of its own floor only, and
/// every floor is fitted as a group of its own). Prints the median time of a fit and the largest
/// error of the fitted offsets (against the drawn gains, each group centred) and a digest of the
/// fit, so that a faster fit is seen to fit as well, or the same.
///
///     swift run -c release presence-bench calibration [--nodes 25,50,100,200] [--floors 1] [--runs 3]
enum CalibrationBenchmark {
    static func main(_ arguments: [String]) {
        if arguments.contains("--help") {
            print("presence-bench calibration [--nodes 25,50,100,200] [--floors 1] [--runs 3]")
            return
        }
        let sizes = benchArgument(arguments, "--nodes").map { $0.split(separator: ",").compactMap { Int($0) } } ?? [25, 50, 100, 200]
        let runs = benchArgument(arguments, "--runs").flatMap { Int($0) } ?? 3
        let floors = max(1, benchArgument(arguments, "--floors").flatMap { Int($0) } ?? 1)
        print("| nodes | floors | links | readings | fit, median of \(runs) | largest offset error | digest of the fit |")
        print("|---:|---:|---:|---:|---:|---:|---|")
        for size in sizes where size >= 4 * floors {
            var random = RandomSource(seed: UInt64(size), labels: "calibration")
            let (calibration, gains) = venue(nodes: size, floors: floors, random: &random)
            var times: [Double] = []
            var fit: NodeLinkCalibration.Fit?
            for _ in 0 ..< max(1, runs) {
                let started = DispatchTime.now().uptimeNanoseconds
                fit = calibration.fit()
                times.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
            }
            let error = fit.map { fit in
                fit.groups.map { group in largestError(fit.offsets.filter { group.nodes.contains($0.key) }, gains) }.max() ?? .infinity
            }.map { String(format: "%.2f dB", $0) } ?? "no fit"
            let fingerprint = fit.map { String(Self.digest(of: $0), radix: 16) } ?? "-"
            print("| \(size) | \(floors) | \(fit?.links ?? 0) | \(calibration.readingCount) | \(String(format: "%.1f ms", times.sorted()[times.count / 2])) | \(error) | \(fingerprint) |")
        }
    }

    /// `nodes` nodes spread over `floors` floors, each a square grid 6 m apart, their gains, and
    /// every link within 20 m on a floor filled.
    private static func venue(nodes count: Int, floors: Int, random: inout RandomSource) -> (NodeLinkCalibration, [String: Double]) {
        let perFloor = (count + floors - 1) / floors
        let side = Int(Double(perFloor).squareRoot().rounded(.up))
        let nodes = (0 ..< count).map { index in
            let place = index % perFloor
            return NodeLinkCalibration.Node(key: "n\(index)", x: Double(place % side) * 6, y: Double(place / side) * 6,
                                            area: floors > 1 ? "floor \(index / perFloor)" : "")
        }
        var gains: [String: Double] = [:]
        for node in nodes { gains[node.key] = random.uniform() * 8 - 4 }
        var calibration = NodeLinkCalibration(nodes: nodes)
        for receiver in nodes {
            for transmitter in nodes where transmitter.key != receiver.key && transmitter.area == receiver.area {
                let distance = ((receiver.x - transmitter.x) * (receiver.x - transmitter.x) + (receiver.y - transmitter.y) * (receiver.y - transmitter.y)).squareRoot()
                guard distance <= 20 else { continue }
                for _ in 0 ..< calibration.maximumReadings {
                    // Path loss as the receiver reads it: its gain makes the signal look stronger.
                    let loss = 20 * log10(distance) - (gains[receiver.key] ?? 0) + 4 * random.gaussian()
                    calibration.add(receiver: receiver.key, transmitter: transmitter.key, pathLoss: loss)
                }
            }
        }
        return (calibration, gains)
    }

    /// The largest difference between fitted offsets and the true correction (minus the gain), each
    /// centred on its mean.
    private static func largestError(_ offsets: [String: Double], _ gains: [String: Double]) -> Double {
        let keys = offsets.keys.filter { gains[$0] != nil }
        guard !keys.isEmpty else { return .infinity }
        let fittedMean = keys.reduce(0) { $0 + (offsets[$1] ?? 0) } / Double(keys.count)
        let trueMean = keys.reduce(0) { $0 + (gains[$1] ?? 0) } / Double(keys.count)
        return keys.map { abs(((offsets[$0] ?? 0) - fittedMean) + ((gains[$0] ?? 0) - trueMean)) }.max() ?? .infinity
    }

    /// A digest of the offsets' bits (in key order) and the exponent's: equal digests, equal fits.
    private static func digest(of fit: NodeLinkCalibration.Fit) -> UInt64 {
        var digest = BenchDigest()
        for value in fit.offsets.keys.sorted().compactMap({ fit.offsets[$0] }) + [fit.exponent] { digest.add(value) }
        return digest.value
    }
}
