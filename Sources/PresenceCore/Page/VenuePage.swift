import DequeModule

/// One event of the venue page's feed: its cursor (the order decided) and the names the page shows.
public struct FeedEntry: Sendable, Equatable {
    public let cursor: Int64
    public let event: PresenceEvent
    public let name: String?
    public let beaconName: String?
}

/// A change the open venue pages must hear about.
public enum PageUpdate: Sendable, Equatable {
    /// An event of the feed.
    case event(FeedEntry)
    /// A user's new place (at no beacon: gone from the plan), with the user's name.
    case user(UserState, name: String?)
    /// A beacon's occupancy.
    case beacon(BeaconState)
    /// The nodes' health table.
    case nodes([NodeRow])
    /// Too much changed at once (a registry, an erasure): pages start again from a snapshot.
    case snapshot
}

/// What the venue page (`--http`) shows beside who is where (the core's `PresenceBoard`): the
/// recent events, each with a cursor, in the order of their time (a back-dated exit lies before a
/// later enter), and the nodes' health rows. A part of the core, which feeds it what it decides;
/// the page's JSON is built only when a page asks or listens (`AggregatorCore+Page`).
public struct VenuePage: Sendable {
    /// How many events the feed keeps.
    public let feedLimit: Int
    /// The feed, by the events' time, then cursor.
    public private(set) var feed = Deque<FeedEntry>()
    public private(set) var nodes: [NodeRow] = []
    private var nextCursor: Int64 = 1

    public init(feedLimit: Int = 500) {
        self.feedLimit = max(1, feedLimit)
    }

    /// The cursor of the newest event, 0 before the first.
    public var cursor: Int64 { nextCursor - 1 }

    /// Whether the feed holds the event `id`.
    public func contains(event id: String) -> Bool {
        feed.contains { $0.event.id == id }
    }

    /// Takes in a decided event: it gets the next cursor and its place in the feed by its time.
    public mutating func add(_ event: PresenceEvent, registry: Registry) -> FeedEntry {
        let entry = FeedEntry(cursor: nextCursor, event: event, name: registry.users[event.user]?.name, beaconName: registry.beacons[event.beacon]?.name)
        nextCursor += 1
        var index = feed.endIndex
        while index > feed.startIndex, feed[index - 1].event.at > event.at { index -= 1 }
        feed.insert(entry, at: index)
        if feed.count > feedLimit { feed.removeFirst() }
        return entry
    }

    /// Drops what the feed holds of forgotten users.
    public mutating func forget(_ users: Set<String>) {
        feed.removeAll { users.contains($0.event.user) }
    }

    /// The nodes' latest rows; true when they changed.
    public mutating func replaceNodes(_ rows: [NodeRow]) -> Bool {
        guard rows != nodes else { return false }
        nodes = rows
        return true
    }

    /// The events after `cursor` in the order decided, at most `limit`, then listed by time.
    public func events(after cursor: Int64, limit: Int) -> [FeedEntry] {
        Array(feed.filter { $0.cursor > cursor }.sorted { $0.cursor < $1.cursor }.prefix(max(0, limit)))
            .sorted { ($0.event.at, $0.cursor) < ($1.event.at, $1.cursor) }
    }
}
