import Foundation
import Testing
@testable import PresenceCore

/// The venue page as the core keeps it: the feed (cursors in the order decided, listed by time),
/// who is where from the core's board, the nodes' rows, what each update streams, and what the
/// page never shows (a device identity, a forgotten user).
@Suite struct VenuePageTests {
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

    /// A core with the page, on `registry`, resumed.
    static func core(_ registry: Registry = registry) -> AggregatorCore {
        var configuration = AggregatorCore.Configuration()
        configuration.catchUp = false
        configuration.page = true
        var core = AggregatorCore(configuration: configuration, registry: registry, now: 0)
        _ = core.resume(at: 0)
        return core
    }

    /// The page updates of `events` decided together.
    static func decide(_ core: inout AggregatorCore, _ events: [PresenceEvent], at time: Int64) -> [PageUpdate] {
        var actions: [AggregatorCore.Action] = []
        core.decided(events, at: time, into: &actions)
        return actions.flatMap { action -> [PageUpdate] in if case .page(let updates) = action { updates } else { [] } }
    }

    static func text(_ bytes: [UInt8]?) -> String { String(decoding: bytes ?? [], as: UTF8.self) }

    @Test func eventsGetCursorsAndTheirUpdatesNameUsersAndBeaconsButNeverADevice() {
        var core = Self.core()
        let updates = Self.decide(&core, [Self.enter("alice", "booth-1", at: 1_000)], at: 1_000)
        #expect(updates.count == 3, "the event, alice's place and booth 1's occupancy: \(updates)")
        guard case .event(let entry) = updates.first else {
            Issue.record("the first update is not the event")
            return
        }
        #expect(entry.cursor == 1)
        let event = Self.text(updates.first?.json)
        #expect(event.contains(#""beacon_name":"Booth 1""#) && event.contains(#""name":"Alice""#))
        let snapshot = Self.text(core.pageSnapshotJSON(at: 2_000))
        for text in [event, snapshot, Self.text(core.pageEventsJSON(after: 0, limit: 10)), Self.text(core.pagePresenceJSON(at: 2_000))]
            + updates.map({ Self.text($0.json) }) {
            #expect(!text.contains("ibeacon:"), "a device identity reached the page")
        }
        #expect(snapshot.contains(#""users":[{"user":"alice","name":"Alice","beacon":"booth-1""#))
        #expect(snapshot.contains(#""key":"booth-1","name":"Booth 1","venue":"expo","x":0,"y":0,"count":1"#))
    }

    @Test func theFeedListsEventsByTimeAndPagesByTheOrderDecided() {
        var page = VenuePage(feedLimit: 3)
        _ = page.add(Self.enter("bob", "booth-1", at: 14_52_35_000), registry: Self.registry)
        // A back-dated exit, decided later, lies before the enter it precedes in time.
        _ = page.add(Self.exit("alice", "booth-2", at: 14_52_30_000, reason: .timeout), registry: Self.registry)
        #expect(page.feed.map(\.event.at) == [14_52_30_000, 14_52_35_000])
        #expect(page.feed.map(\.cursor) == [2, 1])
        for time in 1 ... 3 { _ = page.add(Self.enter("bob", "booth-2", at: 14_53_00_000 + Int64(time)), registry: Self.registry) }
        #expect(page.cursor == 5 && page.feed.count == 3, "the feed keeps its limit")
        #expect(page.feed.map(\.cursor) == [3, 4, 5], "the oldest by time went first")
        #expect(page.events(after: 3, limit: 10).map(\.cursor) == [4, 5])
        #expect(page.events(after: 0, limit: 2).map(\.cursor) == [3, 4], "a page asking from the start gets the oldest decided first")
    }

    @Test func theFeedJSONListsByTimeWithTheCursorToAskFromNext() {
        var core = Self.core()
        _ = Self.decide(&core, [Self.enter("bob", "booth-1", at: 35_000)], at: 36_000)
        _ = Self.decide(&core, [Self.exit("alice", "booth-2", at: 30_000, reason: .timeout)], at: 45_000)
        let feed = Self.text(core.pageEventsJSON(after: 0, limit: 10))
        #expect(feed.hasPrefix(#"{"v":1,"cursor":2,"oldest":1,"events":[{"cursor":2,"event":"exit","user":"alice""#), "\(feed)")
    }

    @Test func aForgottenUserLeavesTheBoardAndTheFeedAndPagesStartAgain() {
        var core = Self.core()
        _ = Self.decide(&core, [Self.enter("alice", "booth-1", at: 1_000), Self.enter("bob", "booth-2", at: 1_000)], at: 1_000)
        var forgotten = Self.registry
        forgotten.users["alice"] = nil
        forgotten.devices = [:]
        forgotten.erasures += 1
        let actions = core.replaceRegistry(forgotten, at: 2_000)
        #expect(actions.contains(.page([.snapshot])))
        let snapshot = Self.text(core.pageSnapshotJSON(at: 2_000))
        #expect(!snapshot.contains("alice") && !snapshot.contains("Alice"), "\(snapshot)")
        #expect(snapshot.contains(#""user":"bob""#))
        #expect(snapshot.contains(#""key":"booth-1","name":"Booth 1","venue":"expo","x":0,"y":0,"count":0"#))
    }

    @Test func aRegistryChangeRestartsPagesAndDropsWhatIsNoLongerRegistered() throws {
        var core = Self.core()
        _ = Self.decide(&core, [Self.enter("bob", "booth-2", at: 1_000)], at: 1_000)
        var smaller = Self.registry
        smaller.users["bob"] = nil
        smaller.beacons["booth-2"] = nil
        #expect(core.replaceRegistry(smaller, at: 2_000).contains(.page([.snapshot])))
        #expect(core.replaceRegistry(smaller, at: 3_000).isEmpty, "the same registry again changes nothing")
        let snapshot = try #require(try JSONSerialization.jsonObject(with: Data(core.pageSnapshotJSON(at: 3_000))) as? [String: Any])
        // Who is where and the plan lose them; the feed keeps what happened while they were registered.
        #expect((snapshot["users"] as? [[String: Any]])?.isEmpty == true, "\(snapshot)")
        #expect((snapshot["beacons"] as? [[String: Any]])?.map { $0["key"] as? String } == ["booth-1"])
        #expect((snapshot["events"] as? [[String: Any]])?.count == 1)
    }

    @Test func nodesAreShownOnlyWhenTheyChange() {
        var page = VenuePage()
        let rows = [NodeRow(key: "n1", online: true, sightingsPerSecond: 4.25, offset: -1.5, offsetSource: "fitted")]
        let first = page.replaceNodes(rows)
        let again = page.replaceNodes(rows)
        #expect(first && !again)
        #expect(Self.text(PageUpdate.nodes(rows).json)
            == #"{"v":1,"nodes":[{"key":"n1","online":true,"sightings_per_second":4.3,"offset_db":-1.5,"offset_source":"fitted"}]}"#)
    }
}
