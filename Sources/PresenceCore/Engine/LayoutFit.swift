#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The `hmm` decision's layout term (`EngineConfiguration.layoutWeight`): how badly the readings
/// of one step fit the path-loss model were the user at a place. Every node with coordinates
/// counts, not only the place's own: a user at a booth is heard loud there, less at the next
/// booth, faint across the hall. The tag's power is unknown, so each place is fitted with the
/// offset that its median reading gives; the misfit is heavy-tailed (Cauchy), so a node behind a
/// body costs a little, not everything. A place is fitted to the readings of nodes on its own
/// floor only: a floor between them adds a loss the model does not know. Storage is kept between
/// steps: a step allocates nothing once it has grown to the venue's size.
struct LayoutFit: Sendable {
    /// Below this distance a node counts as this far (m): a tag is carried, not held to the node.
    static let nearest = 1.0
    /// The noise of one reading about the model, dB (the Cauchy scale).
    static let spread = 4.0
    /// Fewer readings than this fit any place about as well: the term is left out.
    static let fewestReadings = 3

    private struct Reading: Sendable {
        var at: Coordinates
        var loss: Double
    }

    private struct Position: Sendable {
        var place: Int32
        var at: Coordinates
    }

    private var readings: [Reading] = []
    /// Where each place may be: its beacon's coordinates, else those of each node anchored at it.
    private var positions: [Position] = []
    private var residuals: [Double] = []

    /// Forgets the last step's readings.
    mutating func begin() {
        readings.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
    }

    /// A reading of path loss `loss` by a node at `node`, of the place numbered `place`, which is
    /// at `position` (its beacon's coordinates, or the node's own).
    mutating func add(node: Coordinates, loss: Double, place: Int32, at position: Coordinates) {
        guard loss.isFinite else { return }
        readings.append(Reading(at: node, loss: loss))
        if !positions.contains(where: { $0.place == place && $0.at == position }) {
            positions.append(Position(place: place, at: position))
        }
    }

    /// Whether the step has enough readings to tell places apart by their layout.
    var isUsable: Bool { readings.count >= Self.fewestReadings }

    /// How badly the step's readings fit the model were the user at the place numbered `place`
    /// (at its best position), with path-loss exponent `exponent`; nil when the place has no
    /// position with enough readings on its floor. 0 is a perfect fit; each reading adds
    /// log(1 + (residual / spread)²).
    mutating func misfit(of place: Int32, exponent: Double) -> Double? {
        var best: Double?
        for position in positions where position.place == place {
            residuals.removeAll(keepingCapacity: true)
            for reading in readings where reading.at.floor == position.at.floor {
                let dx = reading.at.x - position.at.x, dy = reading.at.y - position.at.y
                let distance = max(Self.nearest, (dx * dx + dy * dy).squareRoot())
                residuals.append(reading.loss - 10 * exponent * log10(distance))
            }
            guard residuals.count >= Self.fewestReadings else { continue }
            // The median by quickselect: a step's residuals need sorting no further than that.
            let middle = residuals.count / 2
            let offset = residuals.withUnsafeMutableBufferPointer { $0.select(middle) }
            // Σ log(1 + x²) as the log of a product: one logarithm per position, not one per
            // reading. The product stays below 1e300: it is folded into the sum past 1e200, and
            // a cost past 1e100 (no radio's) goes to the sum alone.
            var total = 0.0
            var product = 1.0
            for residual in residuals {
                let scaled = (residual - offset) / Self.spread
                let cost = 1 + scaled * scaled
                if cost > 1e100 {
                    total += log(cost)
                    continue
                }
                product *= cost
                if product > 1e200 {
                    total += log(product)
                    product = 1
                }
            }
            best = min(best ?? .infinity, total + log(product))
        }
        return best
    }
}
