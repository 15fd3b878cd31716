import Testing
@testable import PresenceCore

@Suite struct CatchUpTests {
    /// The defaults (quiet 500 ms, lateness 1 s, limit 30 s) with a hold of 15 s.
    static let configuration = {
        var configuration = AggregatorCore.Configuration()
        configuration.inboundDownHold = 15_000
        return configuration
    }()
    static let down: Int64 = 1_000_000

    static func ending(_ catchUp: CatchUp, at now: Int64, lag: Int64, awaiting: Bool = false) -> CatchUp.Ending? {
        catchUp.ending(at: now, lag: lag, awaiting: awaiting, configuration: configuration)
    }

    @Test func whileTheWayInIsDownOnlyTheHoldEndsIt() {
        let held = CatchUp(cause: .inboundDown, since: Self.down)
        // Decisions close to the wall clock, a long silence: neither ends a hold while the way in is down.
        #expect(Self.ending(held, at: Self.down + 100, lag: 100) == nil)
        #expect(Self.ending(held, at: Self.down + 14_999, lag: 14_999) == nil)
        #expect(Self.ending(held, at: Self.down + 15_000, lag: 15_000) == .released)
        #expect(Self.ending(held, at: Self.down + 15_000, lag: 15_000, awaiting: true) == .released)
    }

    @Test func onceBackItEndsCaughtUpOrQuietWithNoNodeAwaitedOrAtTheLimit() {
        var back = CatchUp(cause: .inboundDown, since: Self.down, back: Self.down + 8_000)
        back.lastSighting = Self.down + 8_200
        #expect(Self.ending(back, at: Self.down + 8_600, lag: 8_000) == nil)
        #expect(Self.ending(back, at: Self.down + 8_700, lag: 8_000) == .quiet)
        // A node still awaited (a hall whose bridge is not back yet): silence is no sign of a drained backlog.
        #expect(Self.ending(back, at: Self.down + 20_000, lag: 20_000, awaiting: true) == nil)
        #expect(Self.ending(back, at: Self.down + 8_700, lag: 1_500, awaiting: true) == .caughtUp)
        #expect(Self.ending(back, at: Self.down + 37_999, lag: 37_999, awaiting: true) == nil)
        #expect(Self.ending(back, at: Self.down + 38_000, lag: 38_000, awaiting: true) == .limit)
    }

    @Test func aStartEndsAsBefore() {
        var start = CatchUp(cause: .start, since: Self.down)
        #expect(Self.ending(start, at: Self.down + 5_000, lag: 60_000) == nil, "not subscribed yet: quiet is no sign")
        #expect(Self.ending(start, at: Self.down + 5_000, lag: 1_500) == .caughtUp)
        start.back = Self.down + 5_000
        #expect(Self.ending(start, at: Self.down + 5_400, lag: 60_000) == nil)
        #expect(Self.ending(start, at: Self.down + 5_500, lag: 60_000) == .quiet)
        #expect(Self.ending(CatchUp(cause: .start, since: Self.down), at: Self.down + 30_000, lag: 60_000) == .limit)
    }

    @Test func theAwaitedNodesAreGivenUpOnceAtTheHold() {
        var held = CatchUp(cause: .inboundDown, since: Self.down, back: Self.down + 9_000)
        #expect(!held.givesUp(at: Self.down + 14_999, configuration: Self.configuration))
        #expect(held.givesUp(at: Self.down + 15_000, configuration: Self.configuration))
        held.gaveUp = true
        #expect(!held.givesUp(at: Self.down + 16_000, configuration: Self.configuration))
        #expect(!CatchUp(cause: .start, since: Self.down).givesUp(at: Self.down + 60_000, configuration: Self.configuration))
    }
}
