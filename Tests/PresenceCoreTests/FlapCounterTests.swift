import PresenceCore
import Testing

/// A flap is a move reversed within the window; nothing else is.
@Suite struct FlapCounterTests {
    static func move(_ user: String, from: String, to: String, at time: Int64) -> [PresenceEvent] {
        [VenuePageTests.exit(user, from, at: time, reason: .moved), VenuePageTests.enter(user, to, at: time)]
    }

    @Test func aMoveBackWithinAMinuteIsAFlapAndLaterIsNot() {
        var flaps = FlapCounter()
        for event in Self.move("a", from: "x", to: "y", at: 0) + Self.move("a", from: "y", to: "x", at: 60_000) { flaps.observe(event) }
        #expect(flaps.count == 1)
        for event in Self.move("a", from: "x", to: "y", at: 200_000) + Self.move("a", from: "y", to: "x", at: 260_001) { flaps.observe(event) }
        #expect(flaps.count == 1)
    }

    @Test func onwardMovesTimeoutsAndOtherUsersAreNotFlaps() {
        var flaps = FlapCounter()
        let events = Self.move("a", from: "x", to: "y", at: 0) + Self.move("a", from: "y", to: "z", at: 5_000)
            + Self.move("b", from: "y", to: "x", at: 6_000)
            + [VenuePageTests.exit("c", "x", at: 0, reason: .timeout), VenuePageTests.enter("c", "y", at: 1_000),
               VenuePageTests.exit("c", "y", at: 2_000, reason: .timeout), VenuePageTests.enter("c", "x", at: 3_000)]
        for event in events { flaps.observe(event) }
        #expect(flaps.count == 0)
    }

    @Test func aForgottenUserIsNotRemembered() {
        var flaps = FlapCounter()
        for event in Self.move("a", from: "x", to: "y", at: 0) { flaps.observe(event) }
        flaps.forget(["a"])
        #expect(flaps.users.isEmpty)
        for event in Self.move("a", from: "y", to: "x", at: 1_000) { flaps.observe(event) }
        #expect(flaps.count == 0)
    }
}
