/// Where the offset added to a node's RSSI comes from: set by hand and pinned (`node pin`,
/// `node add --rssi-offset`, `calibrate --apply`), fitted by the aggregator's self-calibration, or
/// neither (the registered offset, normally 0). The rule `SelfCalibration` applies.
public enum OffsetSource: String, Sendable, Equatable, CaseIterable {
    case pinned, fitted, none

    /// The offset applied to `node` and its source, given the offset self-calibration fitted for it.
    public static func applied(to node: Registry.Node, fitted: Double?) -> (offset: Double, source: OffsetSource) {
        if node.pinned { return (node.rssiOffset, .pinned) }
        if let fitted { return (fitted, .fitted) }
        return (node.rssiOffset, .none)
    }
}
