import Testing
@testable import PresenceCore

@Suite struct BeaconStateThrottleTests {
    @Test func aChangeGoesOutAtOnceAndLaterOnesWaitForTheInterval() {
        var throttle = BeaconStateThrottle(interval: 1_000)
        var out = throttle.changed(["b", "a"], at: 10_000)
        #expect(out == ["a", "b"])
        out = throttle.changed(["a"], at: 10_400)
        #expect(out.isEmpty)
        out = throttle.changed(["a", "c"], at: 10_600)
        #expect(out == ["c"])
        out = throttle.due(at: 10_999)
        #expect(out.isEmpty)
        out = throttle.due(at: 11_000)
        #expect(out == ["a"])
        out = throttle.due(at: 12_000)
        #expect(out.isEmpty, "nothing changed since")
        // Sent at 11,000 by `due`: the next change waits until 12,000.
        out = throttle.changed(["a"], at: 11_500)
        #expect(out.isEmpty)
        out = throttle.changed(["a"], at: 12_000)
        #expect(out == ["a"], "the waiting change goes out with this one")
        out = throttle.due(at: 13_000)
        #expect(out.isEmpty)
    }

    @Test func flushAndForget() {
        var throttle = BeaconStateThrottle(interval: 1_000)
        _ = throttle.changed(["a", "b", "c"], at: 0)
        var out = throttle.changed(["a", "b", "c"], at: 1)
        #expect(out.isEmpty)
        throttle.forget("b")
        out = throttle.due(at: 2, flush: true)
        #expect(out == ["a", "c"])
        out = throttle.changed(["b"], at: 3)
        #expect(out == ["b"], "a forgotten beacon starts afresh")
        #expect(BeaconStateThrottle(interval: -5).interval == 0)
        var unpaced = BeaconStateThrottle(interval: 0)
        let first = unpaced.changed(["a"], at: 0)
        let second = unpaced.changed(["a"], at: 0)
        #expect(first == ["a"] && second == ["a"])
    }

    @Test func extremeTimesNeitherTrapNorHoldAStateForever() {
        var throttle = BeaconStateThrottle(interval: 1_000)
        var out = throttle.changed(["a"], at: .max)
        #expect(out == ["a"])
        out = throttle.changed(["a"], at: .min)
        #expect(out == ["a"], "a clock that went back does not hold a state back")
        out = throttle.changed(["a"], at: .min + 1)
        #expect(out.isEmpty)
        out = throttle.due(at: .max)
        #expect(out == ["a"])
    }
}
