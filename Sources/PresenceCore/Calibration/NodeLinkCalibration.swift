#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Fits each node's receive offset, each node's transmit offset and the path-loss exponent of
/// each area (a venue's floor) from nodes hearing each other's beacons (`presence-scanner
/// --advertise`), with the registered node coordinates: the path loss from node j to node i, in
/// dB, is modelled as
///
///     loss(i, j) = 10 · n · log10(distance(i, j)) − receive(i) − transmit(j)
///
/// (loss counted from the advertised 1 m power). Only nodes of the same area are linked: the
/// coordinates of two venues, or of two floors, say nothing of the distance between them. Each
/// link's readings are first reduced to their median; the nodes that links join (a group: an area,
/// or an island of one) are then fitted together by least squares, reweighted twice so that a link
/// whose residual is far beyond the others' (a wall, a metal shelf) counts less (Huber weights).
/// Each group has its own exponent, and its receive offsets are centred on zero (only differences
/// between nodes that hear each other can be known).
///
/// Pure and deterministic: the same readings give the same fit in any process.
public struct NodeLinkCalibration: Sendable {
    /// One node's place, as registered.
    public struct Node: Sendable, Equatable {
        public var key: String
        public var x: Double
        public var y: Double
        /// The venue and floor the coordinates are on; nodes of different areas are never linked.
        public var area: String

        public init(key: String, x: Double, y: Double, area: String = "") {
            self.key = key
            self.x = x
            self.y = y
            self.area = area
        }
    }

    /// The fit of one group: nodes of one area that links join.
    public struct Group: Sendable, Equatable {
        public var area: String
        /// The group's nodes, by key, sorted.
        public var nodes: [String]
        /// The group's path-loss exponent.
        public var exponent: Double
        /// Links the group's fit rests on.
        public var links: Int
        /// RMS of the group's weighted residuals, dB.
        public var residual: Double

        public init(area: String, nodes: [String], exponent: Double, links: Int, residual: Double) {
            self.area = area
            self.nodes = nodes
            self.exponent = exponent
            self.links = links
            self.residual = residual
        }
    }

    /// The result of a fit.
    public struct Fit: Sendable, Equatable {
        /// dB to add to each node's RSSI (its receive offset, negated: a node that hears 3 dB
        /// hot gets −3), by node key; nodes no link reached, or whose group the links do not
        /// determine, are left out.
        public var offsets: [String: Double]
        /// The path-loss exponent: the groups' exponents weighted by their links.
        public var exponent: Double
        /// Links (pairs heard at least `minimumReadings` times) the fit rests on.
        public var links: Int
        /// RMS of the weighted residuals, dB, over every group: how well the model explains the links.
        public var residual: Double
        /// Each group fitted, by area, then by first node.
        public var groups: [Group]

        public init(offsets: [String: Double], exponent: Double, links: Int, residual: Double, groups: [Group] = []) {
            self.offsets = offsets
            self.exponent = exponent
            self.links = links
            self.residual = residual
            self.groups = groups
        }

        /// The group `node` was fitted in, if any.
        public func group(of node: String) -> Group? {
            groups.first { $0.nodes.contains(node) }
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
    /// by itself, between nodes of different areas or at the same place are ignored.
    public mutating func add(receiver: String, transmitter: String, pathLoss: Double) {
        guard pathLoss.isFinite, let i = index[receiver], let j = index[transmitter], i != j, nodes[i].area == nodes[j].area,
              distance(i, j) >= 0.5 else { return }
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

    /// The fit, or nil when the links determine no group (too few links for the offsets they
    /// involve, or distances all alike).
    public func fit() -> Fit? {
        let links = readings.filter { $0.value.count >= minimumReadings }.keys.sorted()
        var offsets: [String: Double] = [:]
        var groups: [Group] = []
        var squares = 0.0
        var total = 0.0
        for members in Self.groups(of: links, nodes: nodes.count) {
            guard let fitted = fit(members.links, nodes: members.nodes) else { continue }
            offsets.merge(fitted.offsets) { $1 }
            groups.append(fitted.group)
            squares += fitted.squares
            total += fitted.total
        }
        guard !groups.isEmpty else { return nil }
        let linkCount = groups.reduce(0) { $0 + $1.links }
        let exponent = groups.reduce(0) { $0 + $1.exponent * Double($1.links) } / Double(max(linkCount, 1))
        groups.sort { ($0.area, $0.nodes.first ?? "") < ($1.area, $1.nodes.first ?? "") }
        return Fit(offsets: offsets, exponent: exponent, links: linkCount, residual: (squares / max(total, 1)).squareRoot(), groups: groups)
    }

    /// The links split into groups of nodes that links join (an area's nodes, or an island of them),
    /// each with its nodes' indices, sorted, in the order of their first node.
    private static func groups(of links: [LinkKey], nodes count: Int) -> [(nodes: [Int], links: [LinkKey])] {
        var parent = Array(0 ..< count)
        func root(_ node: Int) -> Int {
            var node = node
            while parent[node] != node {
                parent[node] = parent[parent[node]]
                node = parent[node]
            }
            return node
        }
        for link in links {
            let a = root(link.receiver), b = root(link.transmitter)
            if a != b { parent[max(a, b)] = min(a, b) }
        }
        var members: [Int: (nodes: Set<Int>, links: [LinkKey])] = [:]
        for link in links {
            let group = root(link.receiver)
            members[group, default: ([], [])].links.append(link)
            members[group]?.nodes.formUnion([link.receiver, link.transmitter])
        }
        return members.keys.sorted().compactMap { members[$0] }.map { ($0.nodes.sorted(), $0.links) }
    }

    /// One group's fit: its nodes' offsets, the group, and its weighted squared residuals and
    /// weights (for the overall RMS); nil when its links do not determine it.
    private func fit(_ links: [LinkKey], nodes members: [Int]) -> (offsets: [String: Double], group: Group, squares: Double, total: Double)? {
        // Each linked receiver and transmitter is an unknown, with the exponent, less the centring;
        // two links more than that, so that the residual says something, and distances that
        // differ (else the exponent is not determined).
        let unknowns = Set(links.map(\.receiver)).count + Set(links.map(\.transmitter)).count
        let distances = links.map { distance($0.receiver, $0.transmitter) }
        guard links.count >= unknowns + 2, let nearest = distances.min(), let farthest = distances.max(), farthest >= 1.5 * nearest else {
            return nil
        }
        var local: [Int: Int] = [:]
        for (position, node) in members.enumerated() { local[node] = position }
        let count = members.count
        // Unknowns: transmit(0 ..< N), receive(N ..< 2N), n. Transmit offsets come first: each
        // meets only its own receivers, so eliminating them first fills in little.
        let rows = links.map { link -> Row in
            Row(transmit: local[link.transmitter] ?? 0, receive: count + (local[link.receiver] ?? 0), exponent: 2 * count,
                logDistance: 10 * log10(distance(link.receiver, link.transmitter)))
        }
        let receivers = Set(rows.map(\.receive)).sorted()
        let losses = links.map { readings[$0]?.median() ?? 0 }
        var weights = [Double](repeating: 1, count: links.count)
        var solution: [Double] = []
        let size = 2 * count + 1
        for _ in 0 ..< 3 {
            // The normal equations, row-major in one buffer.
            var normal = [Double](repeating: 0, count: size * size)
            var right = [Double](repeating: 0, count: size)
            for (k, row) in rows.enumerated() {
                let terms = [(row.transmit, -1.0), (row.receive, -1.0), (row.exponent, row.logDistance)]
                for (a, x) in terms {
                    right[a] += weights[k] * x * losses[k]
                    for (b, y) in terms { normal[a * size + b] += weights[k] * x * y }
                }
            }
            // The offsets of the nodes that receive centred by a soft row.
            for a in receivers {
                for b in receivers { normal[a * size + b] += 100 }
            }
            // A little ridge keeps nodes no link reached (and transmit offsets) at zero.
            for a in 0 ..< 2 * count { normal[a * size + a] += 1e-6 }
            guard let solved = Self.solve(normal, right) else { return nil }
            solution = solved
            for (k, row) in rows.enumerated() {
                let residual = abs(row.predicted(solution) - losses[k])
                weights[k] = residual <= huberThreshold ? 1 : huberThreshold / residual
            }
        }
        let exponent = solution[2 * count]
        guard exponent.isFinite, exponent > 0 else { return nil }
        var offsets: [String: Double] = [:]
        for link in links {
            offsets[nodes[link.receiver].key] = -solution[count + (local[link.receiver] ?? 0)]
        }
        var squares = 0.0
        var total = 0.0
        for (k, row) in rows.enumerated() {
            let residual = row.predicted(solution) - losses[k]
            squares += weights[k] * residual * residual
            total += weights[k]
        }
        let group = Group(area: nodes[members[0]].area, nodes: members.map { nodes[$0].key }.sorted(), exponent: exponent,
                          links: links.count, residual: (squares / max(total, 1)).squareRoot())
        return (offsets, group, squares, total)
    }

    /// One link in a group's system: where its unknowns are, and its distance term.
    private struct Row {
        var transmit: Int
        var receive: Int
        var exponent: Int
        var logDistance: Double

        func predicted(_ solution: [Double]) -> Double {
            solution[exponent] * logDistance - solution[receive] - solution[transmit]
        }
    }

    private func distance(_ i: Int, _ j: Int) -> Double {
        let dx = nodes[i].x - nodes[j].x
        let dy = nodes[i].y - nodes[j].y
        return (dx * dx + dy * dy).squareRoot()
    }

    /// Solves `a · x = b` for a symmetric positive definite `a` (normal equations with a ridge) by
    /// Gaussian elimination without pivoting, which such a matrix does not need, so that the
    /// unknowns are eliminated in their order and zeros stay zeros until fill-in reaches them;
    /// `a` row-major in one buffer of `b.count` squared (nested arrays spent most of a fit
    /// checking their rows' uniqueness); nil when a pivot vanishes (not positive definite).
    static func solve(_ a: [Double], _ b: [Double]) -> [Double]? {
        var a = a
        var b = b
        let n = b.count
        guard a.count == n * n else { return nil }
        let solvable = a.withUnsafeMutableBufferPointer { a in
            b.withUnsafeMutableBufferPointer { b in
                for column in 0 ..< n {
                    let diagonal = a[column * n + column]
                    guard diagonal > 1e-12 else { return false }
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
