/// The nodes a catch-up waits for after the way in was down: those heard just before, whose
/// batches the broker, a hall broker or the nodes' own spools keep meanwhile and deliver when the
/// way is open again, each node in its order but not in step with the others (a hall whose bridge
/// reconnects after the aggregator delivers its backlog later than the nodes on the central broker
/// deliver theirs). Until a node is heard live again, or given up, the clock does not pass the time
/// it has been heard up to: a watermark per node, kept only while catching up, so that a node's
/// backlog is merged in its own time rather than found late.
public struct AwaitedNodes: Sendable, Equatable {
    /// Each awaited node's time heard up to (its last batch's `sent`, on our clock), ms.
    public private(set) var heardUpTo: [String: Int64]
    /// The earliest of them, which the clock does not pass; `Int64.max` when none is awaited.
    public private(set) var floor: Int64

    /// Awaits `nodes`, each heard up to the time given.
    public init(_ nodes: [String: Int64] = [:]) {
        heardUpTo = nodes
        floor = nodes.values.min() ?? .max
    }

    public var isEmpty: Bool { heardUpTo.isEmpty }
    public var count: Int { heardUpTo.count }

    /// A batch of `node`, `sent` at a time that is `sentOnOurClock` on ours (its usual delay
    /// added: `NodeClock.offset`), arrived at `arrival`: the node is heard up to then, and awaited no
    /// more once the batch is live (it arrived within `lateness` of that time). A node not awaited
    /// changes nothing.
    public mutating func heard(_ node: String, sentOnOurClock: Int64, at arrival: Int64, lateness: Int64) {
        guard let before = heardUpTo[node] else { return }
        if TimeBounds.difference(arrival, sentOnOurClock) <= lateness {
            heardUpTo[node] = nil
        } else {
            heardUpTo[node] = max(before, sentOnOurClock)
        }
        // Times only grow: the floor moves only when the node that held it moved or left.
        if before == floor { floor = heardUpTo.values.min() ?? .max }
    }
}
