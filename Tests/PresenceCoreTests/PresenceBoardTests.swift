import Testing
@testable import PresenceCore

@Suite struct PresenceBoardTests {
    func event(_ kind: PresenceEvent.Kind, _ user: String, _ beacon: String, at time: Int64, _ reason: PresenceEvent.ExitReason? = nil) -> PresenceEvent {
        PresenceEvent(kind: kind, id: "\(kind)\(user)\(time)", user: user, device: "d", beacon: beacon, venue: "v", at: time,
                      entered: kind == .exit ? 0 : nil, reason: reason)
    }

    @Test func aMovePublishesTheFinalStateOfTheUserAndBothBeacons() {
        var board = PresenceBoard()
        _ = board.apply([event(.enter, "alice", "a", at: 1), event(.enter, "bob", "a", at: 2)])
        let changes = board.apply([event(.exit, "alice", "a", at: 5, .moved), event(.enter, "alice", "b", at: 5)])
        #expect(changes.users == [UserState(user: "alice", beacon: "b", venue: "v", since: 5)])
        #expect(changes.beacons == [BeaconState(beacon: "a", users: ["bob"]), BeaconState(beacon: "b", users: ["alice"])])
        let timeout = board.apply([event(.exit, "bob", "a", at: 9, .timeout)])
        #expect(timeout.users == [UserState(user: "bob", beacon: nil, venue: "v", since: 9)])
        let incognito = board.apply([event(.exit, "alice", "b", at: 9, .incognito)])
        #expect(incognito.users.isEmpty && incognito.clearedUsers == ["alice"])
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
        _ = board.apply([event(.enter, "alice", "a", at: 1)])
        #expect(board.place("alice", at: Position(x: 0, y: 0, floor: 1, accuracy: 1))?.position?.x == 0)
        #expect(board.place("alice", at: Position(x: 0.5, y: 0.5, floor: 1, accuracy: 1)) == nil)
        #expect(board.place("alice", at: Position(x: 1, y: 0.5, floor: 1, accuracy: 1)) != nil)
        #expect(board.place("alice", at: Position(x: 1, y: 0.5, floor: 2, accuracy: 1))?.position?.floor == 2)
    }
}
