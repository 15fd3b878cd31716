import Foundation
import Testing
@testable import PresenceCore

/// `HomeAssistantDiscovery`: configs at the start and on registry changes (only what changed),
/// removals as empty retained payloads (config first), trackers that follow the board of who is
/// where, and incognito users hidden.
@Suite struct HomeAssistantDiscoveryTests {
    static let t0: Int64 = 1_763_774_735_050
    static let pipeline = (try? Topics(prefix: "site/presence")) ?? { preconditionFailure() }()
    static let assistant = (try? HomeAssistantTopics(prefix: "ha")) ?? { preconditionFailure() }()

    static var registry: Registry {
        Registry(venues: [.init(key: "expo", name: "Expo")],
                 beacons: [.init(key: "booth-a", venue: "expo", name: "Booth A"), .init(key: "booth-b", venue: "expo")],
                 users: [.init(key: "alice", name: "Alice"), .init(key: "bob")])
    }

    /// Discovery beside a board of who is where, driven as the core drives them.
    struct Tracking {
        var discovery = HomeAssistantDiscovery(configuration: .init(topics: assistant, pipeline: pipeline))
        var board = PresenceBoard()
        var registry = HomeAssistantDiscoveryTests.registry

        mutating func update(registry: Registry, at time: Int64) -> [OutboundMessage] {
            self.registry = registry
            return discovery.update(registry: registry, board: board, at: time)
        }

        /// The trackers after `events`, decided together.
        mutating func decide(_ events: [PresenceEvent], at time: Int64) -> [OutboundMessage] {
            _ = board.record(events)
            var touched: [String] = []
            for event in events where !touched.contains(event.user) { touched.append(event.user) }
            return discovery.follow(touched, events: events, registry: registry, board: board, at: time)
        }

        /// The tracker after a new position of `user` (what the core does not follow: checked here).
        mutating func place(_ user: String, at position: Position, time: Int64) -> [OutboundMessage] {
            _ = board.place(user, at: position)
            return discovery.follow([user], events: [], registry: registry, board: board, at: time)
        }

        mutating func restore(_ sessions: [Presence]) {
            _ = board.restore(sessions, beacons: Array(registry.beacons.keys))
        }
    }

    static func enter(_ user: String, _ beacon: String, at time: Int64, distance: Double = 1.84) -> PresenceEvent {
        PresenceEvent(kind: .enter, id: "e-\(user)-\(time)", user: user, device: "mac:c4:7c:8d:6a:2b:01", beacon: beacon, venue: "expo",
                      at: time, rssi: -61.5, distance: distance, proximity: Proximity(distance: distance))
    }

    static func exit(_ user: String, _ beacon: String, at time: Int64, reason: PresenceEvent.ExitReason) -> PresenceEvent {
        PresenceEvent(kind: .exit, id: "x-\(user)-\(time)", user: user, device: "mac:c4:7c:8d:6a:2b:01", beacon: beacon, venue: "expo",
                      at: time, entered: time - 1000, reason: reason)
    }

    /// Topic and payload text of each message, all of which must be retained.
    static func texts(_ messages: [OutboundMessage]) -> [String] {
        #expect(messages.allSatisfy { $0.retain })
        return messages.map { "\($0.topic) \(String(decoding: $0.payload, as: UTF8.self))" }
    }

    static func object(_ message: OutboundMessage?) -> [String: Any]? {
        message.flatMap { (try? JSONSerialization.jsonObject(with: Data($0.payload))) as? [String: Any] }
    }

    @Test func theStartPublishesEveryConfigAndNotHomeThenNothingUntilSomethingChanges() throws {
        var discovery = Tracking()
        let start = discovery.update(registry: Self.registry, at: Self.t0)
        #expect(start.map(\.topic) == [
            "ha/device_tracker/presence_alice/config", "ha/device_tracker/presence_alice/state", "ha/device_tracker/presence_alice/attributes",
            "ha/device_tracker/presence_bob/config", "ha/device_tracker/presence_bob/state", "ha/device_tracker/presence_bob/attributes",
            "ha/sensor/presence_booth-a/config", "ha/sensor/presence_booth-b/config",
        ])
        #expect(Self.texts(start).filter { $0.contains("/state ") } == ["ha/device_tracker/presence_alice/state not_home", "ha/device_tracker/presence_bob/state not_home"])
        #expect(Self.texts(start).filter { $0.contains("/attributes ") } == [
            #"ha/device_tracker/presence_alice/attributes {"beacon":null}"#, #"ha/device_tracker/presence_bob/attributes {"beacon":null}"#,
        ])
        let alice = try #require(Self.object(start.first))
        #expect((alice["device"] as? [String: Any])?["name"] as? String == "Alice")
        #expect((Self.object(start[3])?["device"] as? [String: Any])?["name"] as? String == "bob", "a user without a name goes by the key")
        #expect((Self.object(start[6])?["device"] as? [String: Any])?["name"] as? String == "Booth A")
        #expect(Self.object(start[6])?["state_topic"] as? String == "site/presence/v1/state/beacons/booth-a")

        #expect(discovery.update(registry: Self.registry, at: Self.t0 + 1000).isEmpty, "an unchanged registry publishes nothing")
        var renamed = Self.registry
        renamed.users["bob"]?.name = "Bob"
        renamed.beacons["booth-b"]?.name = "Booth B"
        let changed = discovery.update(registry: renamed, at: Self.t0 + 2000)
        #expect(changed.map(\.topic) == ["ha/device_tracker/presence_bob/config", "ha/sensor/presence_booth-b/config"])
    }

    @Test func aRemovedUserOrBeaconIsClearedConfigFirstAndStaysCleared() {
        var discovery = Tracking()
        _ = discovery.update(registry: Self.registry, at: Self.t0)
        _ = discovery.decide([Self.enter("bob", "booth-b", at: Self.t0)], at: Self.t0)
        var smaller = Self.registry
        smaller.users["bob"] = nil
        smaller.beacons["booth-b"] = nil
        #expect(Self.texts(discovery.update(registry: smaller, at: Self.t0 + 1000)) == [
            "ha/device_tracker/presence_bob/config ", "ha/device_tracker/presence_bob/state ", "ha/device_tracker/presence_bob/attributes ",
            "ha/sensor/presence_booth-b/config ",
        ])
        // The core then ends bob's session (removed): nothing more is published about him.
        #expect(discovery.decide([Self.exit("bob", "booth-b", at: Self.t0 + 1000, reason: .removed)], at: Self.t0 + 1000).isEmpty)
        // Registered again: published afresh.
        #expect(discovery.update(registry: Self.registry, at: Self.t0 + 2000).map(\.topic) == [
            "ha/device_tracker/presence_bob/config", "ha/device_tracker/presence_bob/state", "ha/device_tracker/presence_bob/attributes",
            "ha/sensor/presence_booth-b/config",
        ])
    }

    @Test func theTrackerFollowsTheUsersPlaceWithBeaconNameDistanceAndSince() throws {
        var discovery = Tracking()
        _ = discovery.update(registry: Self.registry, at: Self.t0)
        let enter = discovery.decide([Self.enter("alice", "booth-a", at: Self.t0)], at: Self.t0)
        #expect(Self.texts(enter) == [
            "ha/device_tracker/presence_alice/state booth-a",
            #"ha/device_tracker/presence_alice/attributes {"beacon":"booth-a","beacon_name":"Booth A","venue":"expo","venue_name":"Expo","distance":1.84,"proximity":"near","since":"2025-11-22T01:25:35.050Z"}"#,
        ])
        // A new position of the same stay changes nothing Home Assistant shows.
        #expect(discovery.place("alice", at: Position(x: 1, y: 2, floor: 0, accuracy: 1), time: Self.t0 + 1000).isEmpty)
        // A move: the exit and the enter are decided together; the tracker shows where she ends.
        let t1 = Self.t0 + 60_000
        #expect(Self.texts(discovery.decide([Self.exit("alice", "booth-a", at: t1, reason: .moved), Self.enter("alice", "booth-b", at: t1, distance: 0.3)],
                                            at: t1)) == [
            "ha/device_tracker/presence_alice/state booth-b",
            #"ha/device_tracker/presence_alice/attributes {"beacon":"booth-b","venue":"expo","venue_name":"Expo","distance":0.3,"proximity":"immediate","since":"2025-11-22T01:26:35.050Z"}"#,
        ])
        let t2 = t1 + 30_000
        #expect(Self.texts(discovery.decide([Self.exit("alice", "booth-b", at: t2, reason: .timeout)], at: t2)) == [
            "ha/device_tracker/presence_alice/state not_home",
            #"ha/device_tracker/presence_alice/attributes {"beacon":null,"since":"2025-11-22T01:27:05.050Z"}"#,
        ])
    }

    @Test func aResumedPlaceKeepsNoDistanceAndUsersWithoutOneStartNotHome() {
        var discovery = Tracking()
        discovery.restore([Presence(user: "alice", device: "mac:c4:7c:8d:6a:2b:01", beacon: "booth-a", venue: "expo", entered: Self.t0, lastSeen: Self.t0)])
        let start = Self.texts(discovery.update(registry: Self.registry, at: Self.t0))
        #expect(start.contains("ha/device_tracker/presence_alice/state booth-a"))
        #expect(start.contains(#"ha/device_tracker/presence_alice/attributes {"beacon":"booth-a","beacon_name":"Booth A","venue":"expo","venue_name":"Expo","since":"2025-11-22T01:25:35.050Z"}"#))
        #expect(start.contains("ha/device_tracker/presence_bob/state not_home"))
    }

    @Test func anIncognitoUserIsUnknownToHomeAssistantAndNotHomeAfterwards() {
        var discovery = Tracking()
        _ = discovery.update(registry: Self.registry, at: Self.t0)
        _ = discovery.decide([Self.enter("alice", "booth-a", at: Self.t0)], at: Self.t0)
        var hiding = Self.registry
        hiding.users["alice"]?.incognitoUntil = Self.t0 + 3_600_000
        let t1 = Self.t0 + 5000
        #expect(Self.texts(discovery.update(registry: hiding, at: t1)) == [
            "ha/device_tracker/presence_alice/state None", "ha/device_tracker/presence_alice/attributes {}",
        ])
        // The core ends her session (incognito) and deletes her state: nothing new is said.
        #expect(discovery.decide([Self.exit("alice", "booth-a", at: t1, reason: .incognito)], at: t1).isEmpty)
        let t2 = t1 + 60_000
        #expect(Self.texts(discovery.update(registry: Self.registry, at: t2)) == [
            "ha/device_tracker/presence_alice/state not_home", #"ha/device_tracker/presence_alice/attributes {"beacon":null}"#,
        ])
    }

    @Test func aDeletedStateOfAVisibleUserIsNotHome() {
        var discovery = Tracking()
        _ = discovery.update(registry: Self.registry, at: Self.t0)
        _ = discovery.decide([Self.enter("bob", "booth-b", at: Self.t0)], at: Self.t0)
        // bob's device (not bob) left the registry: his session ended with `removed`.
        let t1 = Self.t0 + 2000
        #expect(Self.texts(discovery.decide([Self.exit("bob", "booth-b", at: t1, reason: .removed)], at: t1)) == [
            "ha/device_tracker/presence_bob/state not_home", #"ha/device_tracker/presence_bob/attributes {"beacon":null,"since":"2025-11-22T01:25:37.050Z"}"#,
        ])
    }

    @Test func objectIDsAreHomeAssistantsCharactersAndKeepKeysApart() throws {
        let keys = ["alice", "desk.3", "desk_3", "desk-3", "a..b", "a._b", "a_.b", "0"]
        let ids = keys.map(HomeAssistantTopics.objectID)
        #expect(ids[1] == "presence_desk_DOT_3")
        #expect(Set(ids).count == keys.count)
        for id in ids {
            #expect(id.unicodeScalars.allSatisfy { CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-").contains($0) })
        }
        #expect(throws: ValueError.self) { try HomeAssistantTopics(prefix: "home/#") }
        #expect(throws: ValueError.self) { try HomeAssistantTopics(prefix: "") }
        #expect(try HomeAssistantTopics(prefix: "site/ha").trackerConfig("desk.3") == "site/ha/device_tracker/presence_desk_DOT_3/config")
    }
}
