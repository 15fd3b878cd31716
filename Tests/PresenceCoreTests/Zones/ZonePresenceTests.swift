import Testing
@testable import PresenceCore

@Suite struct ZonePresenceTests {
    /// An office (two desks) on a floor, with a kitchen on the floor and a lobby outside.
    static let registry = Registry(
        zones: [.init(key: "floor", venue: "hq"), .init(key: "office", parent: "floor")],
        beacons: [.init(key: "desk-1", venue: "hq", zone: "office"), .init(key: "desk-2", venue: "hq", zone: "office"),
                  .init(key: "kitchen", venue: "hq", zone: "floor"), .init(key: "lobby", venue: "hq")])

    static func enter(_ beacon: String, at: Int64, user: String = "ann") -> PresenceEvent {
        PresenceEvent(kind: .enter, id: "e\(at)", user: user, device: "tag", beacon: beacon, venue: "hq", at: at)
    }

    static func exit(_ beacon: String, at: Int64, entered: Int64, reason: PresenceEvent.ExitReason, user: String = "ann") -> PresenceEvent {
        PresenceEvent(kind: .exit, id: "x\(at)", user: user, device: "tag", beacon: beacon, venue: "hq", at: at, entered: entered, reason: reason)
    }

    static func lines(_ steps: [ZonePresence.Step]) -> [String] {
        steps.flatMap { $0.before + $0.after }.map { "\($0.kind.rawValue) \($0.zone) @\($0.at)\($0.reason.map { " " + $0.rawValue } ?? "")" }
    }

    @Test func movingBetweenDesksKeepsTheOfficeAndLeavingEndsEveryLevelInnermostFirst() {
        var zones = ZonePresence(map: ZoneMap(registry: Self.registry))
        var steps = zones.follow([Self.enter("desk-1", at: 1_000)])
        #expect(steps.count == 1 && steps[0].after.isEmpty)
        #expect(Self.lines(steps) == ["enter floor @1000", "enter office @1000"])
        steps = zones.follow([Self.exit("desk-1", at: 9_000, entered: 1_000, reason: .moved), Self.enter("desk-2", at: 9_000)])
        #expect(Self.lines(steps).isEmpty, "the office and the floor go on")
        steps = zones.follow([Self.exit("desk-2", at: 20_000, entered: 9_000, reason: .moved), Self.enter("kitchen", at: 20_000)])
        #expect(steps[1].before.map(\.kind) == [.exit], "the office ends just before the kitchen's enter, after the desk's exit")
        #expect(Self.lines(steps) == ["exit office @20000 moved"])
        #expect(steps[1].before.first?.entered == 1_000 && steps[1].before.first?.beacon == "kitchen")
        steps = zones.follow([Self.exit("kitchen", at: 30_000, entered: 20_000, reason: .moved), Self.enter("desk-1", at: 30_000),
                              Self.exit("desk-1", at: 45_000, entered: 30_000, reason: .timeout)])
        #expect(Self.lines(steps) == ["enter office @30000", "exit office @45000 timeout", "exit floor @45000 timeout"])
        #expect(steps[2].after.map(\.entered) == [30_000, 1_000])
        #expect(zones.openSessions.isEmpty)
    }

    @Test func idsAreStableAndDifferFromTheBeaconsEvents() throws {
        let first = ZoneEvent(kind: .enter, user: "ann", device: "tag", zone: "office", venue: "hq", beacon: "desk-1", at: 5)
        let again = ZoneEvent(kind: .enter, user: "ann", device: "tag", zone: "office", venue: "hq", beacon: "desk-2", at: 5)
        #expect(first.id == again.id)
        #expect(first.id != EventID.make(kind: .enter, user: "ann", device: "tag", beacon: "office", at: 5, entered: nil))
        #expect(try ZoneEvent(payload: first.encoded()) == first)
        let exit = ZoneEvent(kind: .exit, user: "ann", device: "tag", zone: "office", venue: nil, beacon: "desk-1", at: 9_505, entered: 5, reason: .timeout)
        #expect(try ZoneEvent(payload: exit.encoded()) == exit)
        #expect(String(decoding: exit.encoded(), as: UTF8.self).contains(#""dwell":9.5"#))
        #expect(throws: PresenceEvent.Unreadable.self) { try ZoneEvent(payload: Array(#"{"event":"enter"}"#.utf8)) }
        #expect(throws: PresenceEvent.Unreadable.self, "a zone's event is not a beacon's") { try PresenceEvent(payload: first.encoded()) }
    }

    @Test func aRegistryChangeUnderAPresentUserEndsAndStartsZonesAsRemoved() {
        var zones = ZonePresence(map: ZoneMap(registry: Self.registry))
        _ = zones.follow([Self.enter("desk-1", at: 1_000)])
        var moved = Self.registry
        moved.beacons["desk-1"]?.zone = "floor"
        moved.zones["annex"] = .init(key: "annex")
        moved.zones["floor"]?.parent = "annex"
        zones.replaceMap(ZoneMap(registry: moved))
        let presence = Presence(user: "ann", device: "tag", beacon: "desk-1", venue: "hq", entered: 1_000, lastSeen: 4_000)
        let events = zones.reconcile(["ann": presence], at: 5_000)
        #expect(events.map { "\($0.kind.rawValue) \($0.zone)\($0.reason.map { " " + $0.rawValue } ?? "")" }
            == ["exit office removed", "enter annex"], "the floor's stay goes on under its new parent")
        #expect(zones.stays(of: "ann").map { "\($0.zone) \($0.entered)" } == ["annex 5000", "floor 1000"])
        #expect(zones.reconcile(["ann": presence], at: 6_000).isEmpty, "nothing more to do")
        #expect(zones.reconcile([:], at: 7_000).map(\.zone) == ["floor", "annex"], "gone: every zone ends, innermost first")
    }

    @Test func resumedStaysKeepTheirEntryAndOnlyWhatNoLongerHoldsEnds() {
        var zones = ZonePresence(map: ZoneMap(registry: Self.registry))
        zones.resume([
            ZoneSession(user: "ann", zone: "office", device: "tag", venue: "hq", entered: 2_000),
            ZoneSession(user: "ann", zone: "floor", device: "tag", venue: "hq", entered: 1_000),
            ZoneSession(user: "bob", zone: "office", device: "tag-b", venue: "hq", entered: 3_000),
        ], beacons: ["ann": "desk-2", "bob": "kitchen"])
        #expect(zones.stays(of: "ann").map(\.zone) == ["floor", "office"])
        let presences = [
            "ann": Presence(user: "ann", device: "tag", beacon: "desk-2", venue: "hq", entered: 2_000, lastSeen: 9_000),
            "bob": Presence(user: "bob", device: "tag-b", beacon: "kitchen", venue: "hq", entered: 3_000, lastSeen: 9_000),
        ]
        let events = zones.reconcile(presences, at: 10_000)
        #expect(events.map { "\($0.user) \($0.kind.rawValue) \($0.zone) @\($0.at)" } == ["bob exit office @10000", "bob enter floor @10000"])
        let steps = zones.follow([Self.exit("desk-2", at: 12_000, entered: 2_000, reason: .timeout)])
        #expect(steps.first?.after.map(\.entered) == [2_000, 1_000], "the stays ended carry the entry they resumed with")
        #expect(zones.openSessions.map { "\($0.user) \($0.zone)" } == ["bob floor"])
        zones.drop(users: ["bob"])
        #expect(zones.openSessions.isEmpty)
    }

    @Test func withoutZonesNothingIsFollowed() {
        var zones = ZonePresence(map: ZoneMap(registry: PresencePipelineTests.registry))
        #expect(zones.isIdle)
        #expect(zones.follow([Self.enter("a", at: 1)]).isEmpty)
    }
}
