/// Counts flaps: a move reversed within a minute (A to B, then B back to A no more than
/// `window` ms later, by the events' own times). It keeps each user's last move only.
public struct FlapCounter: Sendable {
    private struct Move: Sendable {
        var from: String
        var to: String
        var at: Int64
    }

    /// How soon a move back counts as a flap, ms.
    public let window: Int64
    /// Flaps seen so far.
    public private(set) var count = 0
    private var lastMove: [String: Move] = [:]
    /// Where a user was leaving because of a move, until the enter that follows.
    private var leaving: [String: String] = [:]

    public init(window: Int64 = 60_000) {
        self.window = window
    }

    /// The users it holds a move for.
    public var users: [String] { Array(Set(lastMove.keys).union(leaving.keys)) }

    /// Takes the next event; events of one user come in order, the exit of a move before its enter.
    public mutating func observe(_ event: PresenceEvent) {
        switch event.kind {
        case .exit where event.reason == .moved:
            leaving[event.user] = event.beacon
        case .exit:
            leaving[event.user] = nil
            lastMove[event.user] = nil
        case .enter:
            guard let from = leaving.removeValue(forKey: event.user) else {
                lastMove[event.user] = nil
                return
            }
            if let last = lastMove[event.user], last.from == event.beacon, last.to == from,
               TimeBounds.difference(event.at, last.at) <= window {
                count += 1
            }
            lastMove[event.user] = Move(from: from, to: event.beacon, at: event.at)
        }
    }

    /// Drops what it holds of `gone` users.
    public mutating func forget(_ gone: Set<String>) {
        for user in gone {
            lastMove[user] = nil
            leaving[user] = nil
        }
    }
}
