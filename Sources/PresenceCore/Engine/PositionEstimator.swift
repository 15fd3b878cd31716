#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Estimates where a device is from its estimated distances to points with known coordinates
/// (the nodes that hear a tag, or the beacons a carried scanner hears): weighted least squares on
/// the log-distance model, solved by Gauss-Newton from the weighted centroid. A distance from RSSI
/// is uncertain in proportion to itself, so near anchors weigh more. The floor is the weighted
/// vote of the anchors' floors.
public enum PositionEstimator {
    /// A point with coordinates and the estimated distance to the device.
    public struct Anchor: Sendable, Equatable {
        public var x: Double
        public var y: Double
        public var floor: Int?
        /// Estimated distance, m.
        public var distance: Double

        public init(x: Double, y: Double, floor: Int?, distance: Double) {
            self.x = x
            self.y = y
            self.floor = floor
            self.distance = distance
        }
    }

    /// The relative spread of a distance estimated from RSSI (σ of distance / distance): about
    /// ln(10)/(10 n) · σ_dB, 0.3 for n = 2 and 2.5 dB of smoothed noise.
    public static let relativeSpread = 0.3

    /// The RMS radius of the estimate's uncertainty: from the weighted least-squares covariance
    /// (JᵀWJ)⁻¹ at the solution, widened when the residuals exceed what the model expects.
    private static func spread(of anchors: [Anchor], weights: [Double], x: Double, y: Double) -> Double {
        var a11 = 0.0, a12 = 0.0, a22 = 0.0, chi2 = 0.0
        for (anchor, weight) in zip(anchors, weights) {
            let dx = x - anchor.x, dy = y - anchor.y
            let range = max(1e-6, (dx * dx + dy * dy).squareRoot())
            a11 += weight * dx * dx / (range * range)
            a12 += weight * dx * dy / (range * range)
            a22 += weight * dy * dy / (range * range)
            chi2 += weight * (range - anchor.distance) * (range - anchor.distance)
        }
        let determinant = a11 * a22 - a12 * a12
        guard determinant > 1e-12 else { return anchors.map(\.distance).max() ?? 0 }
        let trace = (a11 + a22) / determinant
        let inflation = max(1, chi2 / Double(max(1, anchors.count - 2)))
        return (trace * inflation).squareRoot()
    }

    /// The position, with its accuracy (an RMS radius, m), or nil without anchors.
    public static func estimate(_ anchors: [Anchor]) -> Position? {
        // Usually every anchor is usable: the caller's array is then read as it is, not copied.
        let usable = anchors.allSatisfy(isUsable) ? anchors : anchors.filter(isUsable)
        guard !usable.isEmpty else { return nil }
        let weights = usable.map { 1 / max(0.25, relativeSpread * $0.distance) / max(0.25, relativeSpread * $0.distance) }
        let total = weights.reduce(0, +)
        var x = zip(usable, weights).reduce(0) { $0 + $1.0.x * $1.1 } / total
        var y = zip(usable, weights).reduce(0) { $0 + $1.0.y * $1.1 } / total
        if usable.count >= 3 {
            for _ in 0 ..< 12 {
                var a11 = 0.0, a12 = 0.0, a22 = 0.0, b1 = 0.0, b2 = 0.0
                for (anchor, weight) in zip(usable, weights) {
                    let dx = x - anchor.x, dy = y - anchor.y
                    let range = max(1e-6, (dx * dx + dy * dy).squareRoot())
                    let jx = dx / range, jy = dy / range
                    let residual = range - anchor.distance
                    a11 += weight * jx * jx
                    a12 += weight * jx * jy
                    a22 += weight * jy * jy
                    b1 += weight * jx * residual
                    b2 += weight * jy * residual
                }
                let determinant = a11 * a22 - a12 * a12
                guard abs(determinant) > 1e-12 else { break }
                let stepX = (a22 * b1 - a12 * b2) / determinant
                let stepY = (a11 * b2 - a12 * b1) / determinant
                x -= stepX
                y -= stepY
                if stepX * stepX + stepY * stepY < 1e-6 { break }
            }
        }
        let accuracy = usable.count >= 3 ? spread(of: usable, weights: weights, x: x, y: y) : usable.map(\.distance).max() ?? 0
        return Position(x: x, y: y, floor: floorVote(usable, weights: weights), accuracy: accuracy)
    }

    private static func isUsable(_ anchor: Anchor) -> Bool {
        anchor.distance.isFinite && anchor.distance > 0 && anchor.x.isFinite && anchor.y.isFinite
    }

    /// The floor the anchors' weights vote for (a tie goes to the lower floor), nil when no anchor
    /// has one. A device is heard by a few anchors: each floor's weights are summed in a pass from
    /// its first anchor, in the anchors' order, rather than kept in a dictionary.
    static func floorVote(_ anchors: [Anchor], weights: [Double]) -> Int? {
        var chosen: (floor: Int, votes: Double)?
        for (index, anchor) in anchors.enumerated() {
            guard let floor = anchor.floor, !anchors[..<index].contains(where: { $0.floor == floor }) else { continue }
            var votes = 0.0
            for other in index ..< anchors.count where anchors[other].floor == floor { votes += weights[other] }
            if let best = chosen, best.votes > votes || (best.votes == votes && best.floor < floor) { continue }
            chosen = (floor, votes)
        }
        return chosen?.floor
    }
}
