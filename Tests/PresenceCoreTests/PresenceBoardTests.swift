import Testing
@testable import PresenceCore

@Suite struct PresenceBoardTests {
    func event(_ kind: PresenceEvent.Kind, _ user: String, _ beacon: String, at time: Int64, _ reason: PresenceEvent.ExitReason? = nil) -> PresenceEvent {
        PresenceEvent(kind: kind, id: "\(kind)\(user)\(time)", user: user, device: "d", beacon: beacon, venue: "v", at: time,
                      entered: kind == .exit ? 0 : nil, reason: reason)
    }

    @Test func aMoveChangesTheFinalStateOfTheUserAndTouchesBothBeacons() {
        var board = PresenceBoard()
        _ = board.record([event(.enter, "alice", "a", at: 1), event(.enter, "bob", "a", at: 2)])
        let (changes, touched) = board.record([event(.exit, "alice", "a", at: 5, .moved), event(.enter, "alice", "b", at: 5)])
        #expect(changes.users == [UserState(user: "alice", beacon: "b", venue: "v", since: 5)])
        #expect(touched == ["a", "b"] && touched.map(board.state(of:)) == [BeaconState(beacon: "a", users: ["bob"]), BeaconState(beacon: "b", users: ["alice"])])
        #expect(board.present.map(\.user) == ["alice", "bob"] && board.count(at: "a") == 1)
        let timeout = board.record([event(.exit, "bob", "a", at: 9, .timeout)]).changes
        #expect(timeout.users == [UserState(user: "bob", beacon: nil, venue: "v", since: 9)])
        #expect(board.place(of: "bob")?.beacon == nil && board.present.map(\.user) == ["alice"])
        let incognito = board.record([event(.exit, "alice", "b", at: 9, .incognito)]).changes
        #expect(incognito.users.isEmpty && incognito.clearedUsers == ["alice"])
        #expect(board.place(of: "alice") == nil, "an incognito user keeps no trace on the board")
    }

    @Test func anEntersReadingStaysWithTheUserUntilTheyLeave() {
        var board = PresenceBoard()
        var enter = event(.enter, "alice", "a", at: 1)
        enter.distance = 1.8
        enter.proximity = .near
        _ = board.record([enter])
        #expect(board.reading(of: "alice") == PresenceBoard.Reading(distance: 1.8, proximity: .near))
        _ = board.place("alice", at: Position(x: 1, y: 1, floor: nil, accuracy: 1))
        #expect(board.reading(of: "alice")?.distance == 1.8, "a new position keeps the enter's reading")
        _ = board.record([event(.exit, "alice", "a", at: 9, .timeout)])
        #expect(board.reading(of: "alice") == nil)
    }

    @Test func forgettingAUserKeepsEveryOtherUsersPlaceAndReading() {
        var board = PresenceBoard()
        let users = ["alice", "bob", "carol", "dave"]
        _ = board.record(users.enumerated().map { index, user in
            var enter = event(.enter, user, "a", at: Int64(index))
            enter.distance = Double(index)
            return enter
        })
        _ = board.forget(user: "bob")
        _ = board.record([event(.exit, "alice", "a", at: 9, .removed)])
        #expect(board.place(of: "bob") == nil && board.place(of: "alice") == nil && board.reading(of: "bob") == nil)
        #expect(board.present.map(\.user) == ["carol", "dave"] && Set(board.users) == ["carol", "dave"])
        #expect(board.reading(of: "carol")?.distance == 2 && board.reading(of: "dave")?.distance == 3)
        #expect(board.place(of: "dave")?.since == 3)
    }

    @Test func restoringPublishesEveryBeaconAndResumedUser() {
        var board = PresenceBoard()
        let changes = board.restore([Presence(user: "alice", device: "d", beacon: "a", venue: "v", entered: 3, lastSeen: 4)], beacons: ["a", "b"])
        #expect(changes.users == [UserState(user: "alice", beacon: "a", venue: "v", since: 3)])
        #expect(changes.beacons == [BeaconState(beacon: "a", users: ["alice"]), BeaconState(beacon: "b", users: [])])
    }

    @Test func positionsArePublishedWhenTheyMoveAMetreOrChangeFloor() {
        var board = PresenceBoard()
        #expect(board.place("alice", at: Position(x: 0, y: 0, floor: 1, accuracy: 1)) == nil, "not present: no state")
        _ = board.record([event(.enter, "alice", "a", at: 1)])
        #expect(board.place("alice", at: Position(x: 0, y: 0, floor: 1, accuracy: 1))?.position?.x == 0)
        #expect(board.place("alice", at: Position(x: 0.5, y: 0.5, floor: 1, accuracy: 1)) == nil)
        #expect(board.place("alice", at: Position(x: 1, y: 0.5, floor: 1, accuracy: 1)) != nil)
        #expect(board.place("alice", at: Position(x: 1, y: 0.5, floor: 2, accuracy: 1))?.position?.floor == 2)
    }
}
