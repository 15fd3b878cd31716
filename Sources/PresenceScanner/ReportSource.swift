import PresenceCore

/// Where a scanner node service's reports come from: an adapter, a capture, the simulator. Its
/// sequence ends when its input does or, once the service shuts down gracefully, when it has
/// stopped taking input and handed on what it had.
public protocol ReportSource: AsyncSequence, Sendable where Element == TimedReport, Failure == Never {
    /// The nodes its reports name, in order; each publishes over its own connection.
    var nodes: [String] { get }
    /// What the nodes' status names as their adapter (`hci0`, `btsnoop:FILE`, `simulated`).
    var adapter: String { get }
    /// What its reports are.
    var form: ReportForm { get }
}
