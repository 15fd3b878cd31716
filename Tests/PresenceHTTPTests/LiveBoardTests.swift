import PresenceCore
import PresenceHTTP
import Testing

/// The page's board: what it keeps from records, what it streams, and what it never shows.
@Suite struct LiveBoardTests {
    static let registry = Registry(
        venues: [.init(key: "expo", name: "Expo")],
        beacons: [.init(key: "booth-1", venue: "expo", name: "Booth 1", x: 0, y: 0), .init(key: "booth-2", venue: "expo", name: "Booth 2", x: 10, y: 0)],
        users: [.init(key: "alice", name: "Alice"), .init(key: "bob")],
        devices: [.init(identity: "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:1:1", user: "alice")])

    static func enter(_ user: String, _ beacon: String, at time: Int64) -> PresenceEvent {
        PresenceEvent(kind: .enter, id: "e\(user)\(time)", user: user, device: "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:1:1",
                      beacon: beacon, venue: "expo", at: time, distance: 1.5, proximity: .near)
    }

    static func exit(_ user: String, _ beacon: String, at time: Int64, reason: PresenceEvent.ExitReason) -> PresenceEvent {
        PresenceEvent(kind: .exit, id: "x\(user)\(time)", user: user, device: "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:1:1",
                      beacon: beacon, venue: "expo", at: time, entered: time - 5_000, reason: reason)
    }

    static func decided(_ events: [PresenceEvent], users: [UserState] = [], beacons: [BeaconState] = []) -> OutboundRecord {
        var states = PresenceBoard.Changes()
        states.users = users
        states.beacons = beacons
        return .decided(.init(events: events, notifications: [], states: states, decidedAt: 0))
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func eventsGetCursorsInOrderAndTheFeedNeverNamesADevice() {
        var board = LiveBoard()
        _ = board.replaceRegistry(Self.registry)
        let updates = board.apply(Self.decided([Self.enter("alice", "booth-1", at: 1_000)],
                                               users: [UserState(user: "alice", beacon: "booth-1", venue: "expo", since: 1_000)],
                                               beacons: [BeaconState(beacon: "booth-1", users: ["alice"])]))
        #expect(updates.count == 3)
        guard case .event(let cursor, let json) = updates.first else {
            Issue.record("the first update is not the event")
            return
        }
        #expect(cursor == 1)
        let event = Self.text(json)
        #expect(event.contains(#""beacon_name":"Booth 1""#))
        #expect(event.contains(#""name":"Alice""#))
        let snapshot = Self.text(board.snapshotJSON(at: 2_000))
        for text in [event, snapshot, Self.text(board.eventsJSON(after: 0, limit: 10)), Self.text(board.presenceJSON(at: 2_000))] {
            #expect(!text.contains("ibeacon:"), "a device identity reached the page")
        }
        #expect(snapshot.contains(#""users":[{"user":"alice","name":"Alice","beacon":"booth-1""#))
        #expect(snapshot.contains(#""key":"booth-1","name":"Booth 1","venue":"expo","x":0,"y":0,"count":1"#))
    }

    @Test func eventsAfterACursorComeOldestFirstAndTheFeedKeepsItsLimit() {
        var board = LiveBoard(feedLimit: 3)
        _ = board.replaceRegistry(Self.registry)
        for time in 1 ... 5 { _ = board.apply(Self.decided([Self.enter("bob", "booth-\(time % 2 + 1)", at: Int64(time) * 1_000)])) }
        #expect(board.cursor == 5)
        let after = Self.text(board.eventsJSON(after: 3, limit: 10))
        #expect(after.hasPrefix(#"{"v":1,"cursor":5,"oldest":3,"events":[{"cursor":4,"#))
        #expect(after.contains(#""cursor":5,"event""#))
        let old = Self.text(board.eventsJSON(after: 0, limit: 2))
        #expect(old.contains(#""cursor":3,"event""#) && old.contains(#""cursor":4,"event""#) && !old.contains(#""cursor":5,"event""#))
    }

    @Test func aForgottenUserLeavesTheBoardAndTheFeed() {
        var board = LiveBoard()
        _ = board.replaceRegistry(Self.registry)
        _ = board.apply(Self.decided([Self.enter("alice", "booth-1", at: 1_000), Self.enter("bob", "booth-2", at: 1_000)],
                                     users: [UserState(user: "alice", beacon: "booth-1", venue: "expo", since: 1_000),
                                             UserState(user: "bob", beacon: "booth-2", venue: "expo", since: 1_000)],
                                     beacons: [BeaconState(beacon: "booth-1", users: ["alice"]), BeaconState(beacon: "booth-2", users: ["bob"])]))
        #expect(board.apply(.erased(users: ["alice"])) == [.snapshot])
        let snapshot = Self.text(board.snapshotJSON(at: 2_000))
        #expect(!snapshot.contains("alice") && !snapshot.contains("Alice"))
        #expect(snapshot.contains(#""user":"bob""#))
        #expect(snapshot.contains(#""key":"booth-1","name":"Booth 1","venue":"expo","x":0,"y":0,"count":0"#))
    }

    @Test func aRegistryChangeRestartsPagesAndDropsWhatIsNoLongerRegistered() {
        var board = LiveBoard()
        #expect(board.replaceRegistry(Self.registry) == [.snapshot])
        #expect(board.replaceRegistry(Self.registry).isEmpty)
        _ = board.apply(Self.decided([], users: [UserState(user: "bob", beacon: "booth-2", venue: "expo", since: 1_000)]))
        var smaller = Self.registry
        smaller.users["bob"] = nil
        smaller.beacons["booth-2"] = nil
        #expect(board.replaceRegistry(smaller) == [.snapshot])
        let snapshot = Self.text(board.snapshotJSON(at: 2_000))
        #expect(!snapshot.contains("bob") && !snapshot.contains("booth-2"))
    }

    @Test func nodesAreStreamedOnlyWhenTheyChange() {
        var board = LiveBoard()
        let rows = [NodeRow(key: "n1", online: true, sightingsPerSecond: 4.25, offset: -1.5, offsetSource: "fitted")]
        let first = board.replaceNodes(rows)
        #expect(first.count == 1)
        #expect(board.replaceNodes(rows).isEmpty)
        #expect(Self.text(board.nodesJSON()) == #"{"v":1,"nodes":[{"key":"n1","online":true,"sightings_per_second":4.3,"offset_db":-1.5,"offset_source":"fitted"}]}"#)
    }
}
