import Foundation
import Testing
@testable import PresenceCore

/// `HomeAssistantDiscovery`: configs at the start and on registry changes (only what changed),
/// removals as empty retained payloads (config first), trackers that follow the user states the
/// core publishes, and incognito users hidden.
@Suite struct HomeAssistantDiscoveryTests {
    static let t0: Int64 = 1_763_774_735_050
    static let pipeline = (try? Topics(prefix: "site/presence")) ?? { preconditionFailure() }()
    static let assistant = (try? HomeAssistantTopics(prefix: "ha")) ?? { preconditionFailure() }()

    static var registry: Registry {
        Registry(venues: [.init(key: "expo", name: "Expo")],
                 beacons: [.init(key: "booth-a", venue: "expo", name: "Booth A"), .init(key: "booth-b", venue: "expo")],
                 users: [.init(key: "alice", name: "Alice"), .init(key: "bob")])
    }

    static func discovery(_ registry: Registry = registry) -> HomeAssistantDiscovery {
        HomeAssistantDiscovery(configuration: .init(topics: assistant, pipeline: pipeline), registry: registry)
    }

    static func enter(_ user: String, _ beacon: String, at time: Int64, distance: Double = 1.84) -> OutboundRecord {
        let event = PresenceEvent(kind: .enter, id: "e-\(user)-\(time)", user: user, device: "mac:c4:7c:8d:6a:2b:01", beacon: beacon, venue: "expo",
                                  at: time, rssi: -61.5, distance: distance, proximity: Proximity(distance: distance))
        var states = PresenceBoard.Changes()
        states.users = [UserState(user: user, beacon: beacon, venue: "expo", since: time)]
        return .decided(.init(events: [event], notifications: [], states: states, decidedAt: time))
    }

    static func exit(_ user: String, _ beacon: String, at time: Int64, reason: PresenceEvent.ExitReason) -> OutboundRecord {
        let event = PresenceEvent(kind: .exit, id: "x-\(user)-\(time)", user: user, device: "mac:c4:7c:8d:6a:2b:01", beacon: beacon, venue: "expo",
                                  at: time, entered: time - 1000, reason: reason)
        var board = PresenceBoard()
        _ = board.apply([PresenceEvent(kind: .enter, id: "e", user: user, device: "d", beacon: beacon, venue: "expo", at: time - 1000)])
        return .decided(.init(events: [event], notifications: [], states: board.apply([event]), decidedAt: time))
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
        var discovery = Self.discovery()
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
        var discovery = Self.discovery()
        _ = discovery.update(registry: Self.registry, at: Self.t0)
        _ = discovery.follow(Self.enter("bob", "booth-b", at: Self.t0), at: Self.t0)
        var smaller = Self.registry
        smaller.users["bob"] = nil
        smaller.beacons["booth-b"] = nil
        #expect(Self.texts(discovery.update(registry: smaller, at: Self.t0 + 1000)) == [
            "ha/device_tracker/presence_bob/config ", "ha/device_tracker/presence_bob/state ", "ha/device_tracker/presence_bob/attributes ",
            "ha/sensor/presence_booth-b/config ",
        ])
        // The core then ends bob's session (removed): nothing more is published about him.
        #expect(discovery.follow(Self.exit("bob", "booth-b", at: Self.t0 + 1000, reason: .removed), at: Self.t0 + 1000).isEmpty)
        var states = PresenceBoard.Changes()
        states.users = [UserState(user: "bob", beacon: nil, venue: nil, since: Self.t0)]
        #expect(discovery.follow(.states(states), at: Self.t0 + 1000).isEmpty)
        // Registered again: published afresh.
        #expect(discovery.update(registry: Self.registry, at: Self.t0 + 2000).map(\.topic) == [
            "ha/device_tracker/presence_bob/config", "ha/device_tracker/presence_bob/state", "ha/device_tracker/presence_bob/attributes",
            "ha/sensor/presence_booth-b/config",
        ])
    }

    @Test func theTrackerFollowsTheUsersStateWithBeaconNameDistanceAndSince() throws {
        var discovery = Self.discovery()
        _ = discovery.update(registry: Self.registry, at: Self.t0)
        let enter = discovery.follow(Self.enter("alice", "booth-a", at: Self.t0), at: Self.t0)
        #expect(Self.texts(enter) == [
            "ha/device_tracker/presence_alice/state booth-a",
            #"ha/device_tracker/presence_alice/attributes {"beacon":"booth-a","beacon_name":"Booth A","venue":"expo","venue_name":"Expo","distance":1.84,"proximity":"near","since":"2025-11-22T01:25:35.050Z"}"#,
        ])
        // A new position of the same stay changes nothing Home Assistant shows.
        var placed = PresenceBoard.Changes()
        placed.users = [UserState(user: "alice", beacon: "booth-a", venue: "expo", since: Self.t0, position: Position(x: 1, y: 2, floor: 0, accuracy: 1))]
        #expect(discovery.follow(.states(placed), at: Self.t0 + 1000).isEmpty)
        // A move: the exit and the enter come in one record; the tracker shows where she ends.
        let t1 = Self.t0 + 60_000
        guard case .decided(var move) = Self.exit("alice", "booth-a", at: t1, reason: .moved),
              case .decided(let arrival) = Self.enter("alice", "booth-b", at: t1, distance: 0.3) else { return }
        move.events += arrival.events
        move.states.users = arrival.states.users
        #expect(Self.texts(discovery.follow(.decided(move), at: t1)) == [
            "ha/device_tracker/presence_alice/state booth-b",
            #"ha/device_tracker/presence_alice/attributes {"beacon":"booth-b","venue":"expo","venue_name":"Expo","distance":0.3,"proximity":"immediate","since":"2025-11-22T01:26:35.050Z"}"#,
        ])
        let t2 = t1 + 30_000
        #expect(Self.texts(discovery.follow(Self.exit("alice", "booth-b", at: t2, reason: .timeout), at: t2)) == [
            "ha/device_tracker/presence_alice/state not_home",
            #"ha/device_tracker/presence_alice/attributes {"beacon":null,"since":"2025-11-22T01:27:05.050Z"}"#,
        ])
    }

    @Test func aResumedStateKeepsNoDistanceAndUsersWithoutOneStartNotHome() {
        var discovery = Self.discovery()
        var restored = PresenceBoard.Changes()
        restored.users = [UserState(user: "alice", beacon: "booth-a", venue: "expo", since: Self.t0)]
        // The core's resumed states come before the first update.
        #expect(Self.texts(discovery.follow(.states(restored), at: Self.t0)) == [
            "ha/device_tracker/presence_alice/state booth-a",
            #"ha/device_tracker/presence_alice/attributes {"beacon":"booth-a","beacon_name":"Booth A","venue":"expo","venue_name":"Expo","since":"2025-11-22T01:25:35.050Z"}"#,
        ])
        let start = Self.texts(discovery.update(registry: Self.registry, at: Self.t0))
        #expect(!start.contains { $0.hasPrefix("ha/device_tracker/presence_alice/state") }, "alice stays at booth-a")
        #expect(start.contains("ha/device_tracker/presence_bob/state not_home"))
    }

    @Test func anIncognitoUserIsUnknownToHomeAssistantAndNotHomeAfterwards() {
        var discovery = Self.discovery()
        _ = discovery.update(registry: Self.registry, at: Self.t0)
        _ = discovery.follow(Self.enter("alice", "booth-a", at: Self.t0), at: Self.t0)
        var hiding = Self.registry
        hiding.users["alice"]?.incognitoUntil = Self.t0 + 3_600_000
        let t1 = Self.t0 + 5000
        #expect(Self.texts(discovery.update(registry: hiding, at: t1)) == [
            "ha/device_tracker/presence_alice/state None", "ha/device_tracker/presence_alice/attributes {}",
        ])
        // The core ends her session (incognito) and deletes her state: nothing new is said.
        #expect(discovery.follow(Self.exit("alice", "booth-a", at: t1, reason: .incognito), at: t1).isEmpty)
        let t2 = t1 + 60_000
        #expect(Self.texts(discovery.update(registry: Self.registry, at: t2)) == [
            "ha/device_tracker/presence_alice/state not_home", #"ha/device_tracker/presence_alice/attributes {"beacon":null}"#,
        ])
    }

    @Test func aDeletedStateOfAVisibleUserIsNotHome() {
        var discovery = Self.discovery()
        _ = discovery.update(registry: Self.registry, at: Self.t0)
        _ = discovery.follow(Self.enter("bob", "booth-b", at: Self.t0), at: Self.t0)
        // bob's device (not bob) left the registry: his session ended with `removed`.
        let t1 = Self.t0 + 2000
        #expect(Self.texts(discovery.follow(Self.exit("bob", "booth-b", at: t1, reason: .removed), at: t1)) == [
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

    @Test func messagesRecordsPublishAsTheyAreAndStoreNothing() {
        let messages = [OutboundMessage(topic: "ha/x", payload: Array("1".utf8), retain: true)]
        #expect(OutboundRecord.messages(messages).messages(Self.pipeline) == messages)
        var fold = JournalFold(sessions: [], clock: 5, notifications: [])
        fold.apply(.messages(messages))
        #expect(fold == JournalFold(sessions: [], clock: 5, notifications: []))
    }
}
