#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Fits each node's receive offset, each node's transmit offset and the venue's path-loss
/// exponent from nodes hearing each other's beacons (`presence-scanner --advertise`), with the
/// registered node coordinates: the path loss from node j to node i, in dB, is modelled as
///
///     loss(i, j) = 10 · n · log10(distance(i, j)) − receive(i) − transmit(j)
///
/// (loss counted from the advertised 1 m power). Each link's readings are first reduced to their
/// median; the links are then fitted by least squares, reweighted twice so that a link whose
/// residual is far beyond the others' (a wall, a metal shelf) counts less (Huber weights). The
/// receive offsets are centred on zero (only differences between nodes can be known).
///
/// Pure and deterministic: the same readings give the same fit in any process.
public struct NodeLinkCalibration: Sendable {
    /// One node's place, as registered.
    public struct Node: Sendable, Equatable {
        public var key: String
        public var x: Double
        public var y: Double

        public init(key: String, x: Double, y: Double) {
            self.key = key
            self.x = x
            self.y = y
        }
    }

    /// The result of a fit.
    public struct Fit: Sendable, Equatable {
        /// dB to add to each node's RSSI (its receive offset, negated: a node that hears 3 dB
        /// hot gets −3), by node key; nodes no link reached are left out.
        public var offsets: [String: Double]
        /// The venue's path-loss exponent.
        public var exponent: Double
        /// Links (pairs heard at least `minimumReadings` times) the fit rests on.
        public var links: Int
        /// RMS of the weighted residuals, dB: how well the model explains the links.
        public var residual: Double

        public init(offsets: [String: Double], exponent: Double, links: Int, residual: Double) {
            self.offsets = offsets
            self.exponent = exponent
            self.links = links
            self.residual = residual
        }
    }

    /// A link needs this many readings to count.
    public var minimumReadings = 10
    /// A link keeps its latest this many readings (older ones drop out, so the fit follows slow
    /// changes and memory stays bounded: nodes² × this).
    public var maximumReadings = 300
    /// Residuals beyond this many dB get a weight that falls with their size.
    public var huberThreshold = 3.0

    private let nodes: [Node]
    private let index: [String: Int]
    /// Readings by (receiver, transmitter) index pair: path losses, dB.
    private var readings: [LinkKey: [Double]] = [:]

    private struct LinkKey: Hashable, Comparable, Sendable {
        var receiver: Int
        var transmitter: Int

        static func < (lhs: LinkKey, rhs: LinkKey) -> Bool {
            (lhs.receiver, lhs.transmitter) < (rhs.receiver, rhs.transmitter)
        }
    }

    /// A calibration for `nodes` (keys must be unique; later duplicates are ignored).
    public init(nodes: [Node]) {
        var unique: [Node] = []
        var index: [String: Int] = [:]
        for node in nodes where index[node.key] == nil {
            index[node.key] = unique.count
            unique.append(node)
        }
        self.nodes = unique
        self.index = index
    }

    /// Takes one reading: `receiver` heard `transmitter`'s beacon with this path loss (the
    /// beacon's advertised power at 1 m minus the RSSI), dB. Readings of unknown nodes, of a node
    /// by itself, or between nodes at the same place are ignored.
    public mutating func add(receiver: String, transmitter: String, pathLoss: Double) {
        guard pathLoss.isFinite, let i = index[receiver], let j = index[transmitter], i != j, distance(i, j) >= 0.5 else { return }
        let key = LinkKey(receiver: i, transmitter: j)
        readings[key, default: []].append(pathLoss)
        if let count = readings[key]?.count, count > maximumReadings + maximumReadings / 2 {
            readings[key]?.removeFirst(count - maximumReadings)
        }
    }

    /// Readings held, over all links.
    public var readingCount: Int {
        readings.values.reduce(0) { $0 + $1.count }
    }

    /// The fit, or nil when the links do not determine it (too few links for the offsets they
    /// involve, or distances all alike).
    public func fit() -> Fit? {
        let links = readings.filter { $0.value.count >= minimumReadings }.keys.sorted()
        // Each linked receiver and transmitter is an unknown, with the exponent, less the centring;
        // two links more than that, so that the residual says something, and distances that
        // differ (else the exponent is not determined).
        let unknowns = Set(links.map(\.receiver)).count + Set(links.map(\.transmitter)).count
        let distances = links.map { distance($0.receiver, $0.transmitter) }
        guard links.count >= unknowns + 2, let nearest = distances.min(), let farthest = distances.max(), farthest >= 1.5 * nearest else {
            return nil
        }
        let losses = links.map { readings[$0]?.median() ?? 0 }
        var weights = [Double](repeating: 1, count: links.count)
        var solution: [Double] = []
        // Unknowns: receive(0 ..< N), transmit(0 ..< N), n. receive is centred by a soft row.
        let count = nodes.count
        let size = 2 * count + 1
        for _ in 0 ..< 3 {
            // The normal equations, row-major in one buffer.
            var normal = [Double](repeating: 0, count: size * size)
            var right = [Double](repeating: 0, count: size)
            func addRow(_ row: [(Int, Double)], _ value: Double, weight: Double) {
                for (a, x) in row {
                    right[a] += weight * x * value
                    for (b, y) in row { normal[a * size + b] += weight * x * y }
                }
            }
            for (k, link) in links.enumerated() {
                let logDistance = 10 * log10(distance(link.receiver, link.transmitter))
                addRow([(link.receiver, -1), (count + link.transmitter, -1), (2 * count, logDistance)], losses[k], weight: weights[k])
            }
            addRow((0 ..< count).map { ($0, 1.0) }, 0, weight: 100)
            // A little ridge keeps nodes no link reached (and transmit offsets) at zero.
            for a in 0 ..< 2 * count { normal[a * size + a] += 1e-6 }
            guard let solved = Self.solve(normal, right) else { return nil }
            solution = solved
            for (k, link) in links.enumerated() {
                let residual = abs(predicted(solution, link, count: count) - losses[k])
                weights[k] = residual <= huberThreshold ? 1 : huberThreshold / residual
            }
        }
        let exponent = solution[2 * count]
        guard exponent.isFinite, exponent > 0 else { return nil }
        var linked = Set<Int>()
        for link in links {
            linked.insert(link.receiver)
        }
        var offsets: [String: Double] = [:]
        for node in linked.sorted() { offsets[nodes[node].key] = -solution[node] }
        var squares = 0.0
        var total = 0.0
        for (k, link) in links.enumerated() {
            let residual = predicted(solution, link, count: count) - losses[k]
            squares += weights[k] * residual * residual
            total += weights[k]
        }
        return Fit(offsets: offsets, exponent: exponent, links: links.count, residual: (squares / max(total, 1)).squareRoot())
    }

    private func predicted(_ solution: [Double], _ link: LinkKey, count: Int) -> Double {
        solution[2 * count] * 10 * log10(distance(link.receiver, link.transmitter)) - solution[link.receiver] - solution[count + link.transmitter]
    }

    private func distance(_ i: Int, _ j: Int) -> Double {
        let dx = nodes[i].x - nodes[j].x
        let dy = nodes[i].y - nodes[j].y
        return (dx * dx + dy * dy).squareRoot()
    }

    /// Solves `a · x = b` by Gaussian elimination with partial pivoting, `a` row-major in one
    /// buffer of `b.count` squared (a fit at 200 nodes is a 401-unknown system: nested arrays spent
    /// most of its time checking their rows' uniqueness); nil when singular.
    static func solve(_ a: [Double], _ b: [Double]) -> [Double]? {
        var a = a
        var b = b
        let n = b.count
        guard a.count == n * n else { return nil }
        let solvable = a.withUnsafeMutableBufferPointer { a in
            b.withUnsafeMutableBufferPointer { b in
                for column in 0 ..< n {
                    var pivot = column
                    for row in column + 1 ..< n where abs(a[row * n + column]) > abs(a[pivot * n + column]) { pivot = row }
                    guard abs(a[pivot * n + column]) > 1e-12 else { return false }
                    if pivot != column {
                        for k in 0 ..< n { a.swapAt(pivot * n + k, column * n + k) }
                        b.swapAt(pivot, column)
                    }
                    let diagonal = a[column * n + column]
                    for row in column + 1 ..< n {
                        let factor = a[row * n + column] / diagonal
                        guard factor != 0 else { continue }
                        for k in column ..< n { a[row * n + k] -= factor * a[column * n + k] }
                        b[row] -= factor * b[column]
                    }
                }
                return true
            }
        }
        guard solvable else { return nil }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var sum = b[row]
            for k in row + 1 ..< n { sum -= a[row * n + k] * x[k] }
            x[row] = sum / a[row * n + row]
        }
        return x
    }
}
