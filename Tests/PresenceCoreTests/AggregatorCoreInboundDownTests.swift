import Testing
@testable import PresenceCore

/// The way in down mid-run: the clock waits for what the nodes say meanwhile, decides it in its own
/// time when it comes, and goes on past the hold so that absences still end in exits.
@Suite struct AggregatorCoreInboundDownTests {
    typealias Core = AggregatorCoreTests
    static let start = Core.start
    static let down = start + 10_000
    /// Alice walks from a to b a second after the way in went down.
    static let move = down + 1_000
    static let back = down + 12_000
    static let end = back + 10_000

    /// A batch of `node` at `time`, what it hears of alice: near a until `move`, near b after.
    static func batch(_ node: String, at time: Int64, seq: Int64) -> [UInt8] {
        let near = (node == "node-a") == (time < move)
        return PresencePipelineTests.batch(node, seq: seq, at: time, rssi: near ? -55 : -80)
    }

    /// Every 500 ms from `start` to `end`, node-a's and node-b's batches, each (node, time, payload).
    static let batches: [(node: String, time: Int64, payload: [UInt8])] = stride(from: start, to: end, by: 500).flatMap { time in
        ["node-a", "node-b"].map { node in (node, time, batch(node, at: time, seq: (time - start) / 500)) }
    }

    /// An input of the core at a time.
    enum Input {
        case batch(node: String, payload: [UInt8])
        case tick
        case down
        case back
    }

    /// Feeds `core` the inputs in time order (ties: as given) and a tick every 100 ms up to `until`;
    /// returns every action, each with the time it came.
    static func run(_ core: inout AggregatorCore, _ inputs: [(time: Int64, input: Input)], until: Int64 = end)
        -> [(time: Int64, action: AggregatorCore.Action)] {
        let ticks = stride(from: start + 100, through: until, by: 100).map { (time: $0, input: Input.tick) }
        let all = (inputs + ticks).enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        var actions: [(Int64, AggregatorCore.Action)] = []
        for (time, input) in all {
            let out: [AggregatorCore.Action] = switch input {
            case .batch(let node, let payload): Core.receive(&core, Core.topics.sightings(node: node), payload, at: time)
            case .tick: core.tick(at: time)
            case .down: core.inboundDown(at: time)
            case .back: core.inboundBack(at: time)
            }
            actions += out.map { (time, $0) }
        }
        return actions
    }

    /// The events among `actions`, as kind, beacon, when and why (what a replay without the outage decides too).
    static func events(_ actions: [(time: Int64, action: AggregatorCore.Action)]) -> [String] {
        Core.events(actions.map(\.action)).map { "\($0.kind) \($0.beacon) \($0.at) \($0.reason.map { "\($0)" } ?? "")" }
    }

    static func logs(_ actions: [(time: Int64, action: AggregatorCore.Action)]) -> [String] {
        actions.compactMap { if case .log(let line) = $0.action { line.message } else { nil } }
    }

    /// Every batch on time (20 ms after it was made): what an aggregator whose way in never went down decides.
    static func onTime() -> [String] {
        var core = Core.resumed()
        return events(run(&core, batches.map { ($0.time + 20, .batch(node: $0.node, payload: $0.payload)) }))
    }

    /// The batches made while the way in was down (before `back` for node-a, before `nodeBBack`
    /// for node-b) kept and delivered together when it is back (a millisecond apart), the others on
    /// time, but never before what their node kept (a node's messages keep their order).
    static func withOutage(nodeBBack: Int64 = back) -> [(time: Int64, input: Input)] {
        var inputs: [(time: Int64, input: Input)] = [(down, .down), (back, .back)]
        var kept = (a: Int64(0), b: Int64(0))
        for batch in batches {
            let returns = batch.node == "node-a" ? back : nodeBBack
            let arrival: Int64
            if batch.time + 20 < down {
                arrival = batch.time + 20
            } else if batch.time >= returns {
                arrival = max(batch.time + 20, returns + 50)
            } else if batch.node == "node-a" {
                kept.a += 1
                arrival = returns + kept.a
            } else {
                kept.b += 1
                arrival = returns + kept.b
            }
            inputs.append((arrival, .batch(node: batch.node, payload: batch.payload)))
        }
        return inputs
    }

    @Test func aMoveMadeWhileTheWayInIsDownIsDecidedInItsOwnTimeWhenItComes() throws {
        let expected = Self.onTime()
        #expect(expected.count == 3, "an enter at a, then the move to b: \(expected)")
        var core = Core.resumed()
        let actions = Self.run(&core, Self.withOutage())
        #expect(Self.events(actions) == expected)
        // Nothing decided while the way in was down, no observation applied late, live again after.
        #expect(Core.events(actions.filter { $0.time > Self.down && $0.time < Self.back }.map(\.action)).isEmpty)
        #expect(core.pipeline.engine.statistics.late == 0)
        #expect(core.state == .live)
        #expect(Self.logs(actions).contains("caught up with what came while the way in was down"))
        let move = try #require(Core.events(actions.map(\.action)).first { $0.kind == .enter && $0.beacon == "b" })
        #expect(move.at >= Self.move && move.at - Self.move <= 1_500, "the move dated \(move.at - Self.move) ms after it happened")

        // Without the hold, the same outage dates the move by the batches' arrival.
        var unheld = Core.resumed { $0.inboundDownHold = 0 }
        let late = Self.run(&unheld, Self.withOutage())
        let lateMove = try #require(Core.events(late.map(\.action)).first { $0.kind == .enter && $0.beacon == "b" })
        #expect(lateMove.at >= Self.back - 1_000, "dated \(lateMove.at - Self.move) ms after the move")
        #expect(unheld.pipeline.engine.statistics.late > 0)
    }

    @Test func aNodeWhoseBacklogComesAfterTheOthersIsWaitedForAndMergedInItsOwnTime() {
        // node-b's hall comes back 2.5 s after the aggregator: node-a is live again meanwhile.
        let expected = Self.onTime()
        var core = Core.resumed()
        let actions = Self.run(&core, Self.withOutage(nodeBBack: Self.back + 2_500))
        #expect(Self.events(actions) == expected)
        #expect(core.pipeline.engine.statistics.late == 0)
        #expect(Self.logs(actions).contains("caught up with what came while the way in was down"))

        // Were node-b not awaited (heard longer ago than the window), node-a's live batches would
        // take the clock past what node-b kept, and that would come late.
        var unawaited = Core.resumed { $0.awaitedWithin = 0 }
        _ = Self.run(&unawaited, Self.withOutage(nodeBBack: Self.back + 2_500))
        #expect(unawaited.pipeline.engine.statistics.late > 0)
    }

    @Test func pastTheHoldDecisionsGoOnSoThatAnAbsenceEndsInAnExit() throws {
        // Alice leaves 5 s before the way in goes down, and it never comes back.
        let left = Self.down - 5_000
        let heard = Self.batches.filter { $0.time < left }
        let inputs: [(time: Int64, input: Input)] = [(Self.down, .down)] + heard.map { ($0.time + 20, .batch(node: $0.node, payload: $0.payload)) }
        var core = Core.resumed()
        let hold = core.configuration.inboundDownHold
        let actions = Self.run(&core, inputs, until: Self.down + hold + 1_000)
        let exits = actions.filter { Core.events([$0.action]).contains { $0.kind == .exit } }
        // Due about 10 s into the outage (the timeout and the lateness after her last sighting),
        // the exit waits for the hold, then comes, dated to her last sighting.
        #expect(exits.map(\.time) == [Self.down + hold])
        let exit = try #require(Core.events(exits.map(\.action)).first)
        #expect(exit.at == heard.last?.time && exit.reason == .timeout)
        #expect(Self.logs(actions).contains("the way in is still down: decisions go on, and what it kept will come late"))
        #expect(core.state == .live)
    }

    /// A core that heard both nodes until the way in went down, ticking until then.
    static func heardUntilDown() -> AggregatorCore {
        var core = Core.resumed()
        _ = run(&core, batches.filter { $0.time + 20 < down }.map { ($0.time + 20, .batch(node: $0.node, payload: $0.payload)) }, until: down)
        return core
    }

    @Test func whileCatchingUpTheNodesStatusAndStatsDoNotMoveTheClock() {
        var core = Self.heardUntilDown()
        _ = core.inboundDown(at: Self.down)
        let held = core.pipeline.clock
        #expect(held <= Self.down && core.catchingUp)
        _ = Core.receive(&core, Core.topics.nodeStats(node: "node-a"), Array(#"{"v":1}"#.utf8), at: Self.down + 3_000)
        _ = Core.receive(&core, Core.topics.nodeStatus(node: "node-b"), Array(#"{"v":1,"state":"online"}"#.utf8), at: Self.down + 3_100)
        _ = core.tick(at: Self.down + 3_200)
        #expect(core.pipeline.clock == held)

        // At a start too: the retained statuses that come with the subscriptions are not the backlog's time.
        var configuration = AggregatorCore.Configuration()
        configuration.topics = Core.topics
        var starting = AggregatorCore(configuration: configuration, registry: PresencePipelineTests.registry, savedClock: Self.start - 60_000, now: Self.start)
        _ = starting.resume(at: Self.start)
        _ = Core.receive(&starting, Core.topics.nodeStatus(node: "node-a"), Array(#"{"v":1,"state":"online"}"#.utf8), at: Self.start + 100)
        _ = Core.receive(&starting, Core.topics.nodeStats(node: "node-a"), Array(#"{"v":1}"#.utf8), at: Self.start + 200)
        #expect(starting.pipeline.clock == Self.start - 60_000 && starting.catchingUp)
    }

    @Test func aStopWhileTheWayInIsDownDecidesOnlyWhatCameAndSavesTheHeldClock() throws {
        var core = Self.heardUntilDown()
        _ = core.inboundDown(at: Self.down)
        let held = core.pipeline.clock
        for time in stride(from: Self.down + 100, through: Self.down + 5_000, by: 100) { _ = core.tick(at: time) }
        let progress = try #require(core.finish(at: Self.down + 5_000).compactMap { action -> OutboundRecord.Progress? in
            if case .record(.progress(let progress)) = action { progress } else { nil }
        }.last)
        // The next start catches up from there with what the broker still keeps.
        #expect(progress.clock == held)
    }

    @Test func aHoldOfZeroLeavesTheClockToTheWallClock() {
        var core = Core.resumed { $0.inboundDownHold = 0 }
        #expect(core.inboundDown(at: Self.down).isEmpty)
        #expect(core.state == .live)
        _ = core.tick(at: Self.down + 1_000)
        #expect(core.pipeline.clock == Self.down + 1_000)
    }

    @Test func theWayInOutOfOrderIsRefusedBeforeAResumeAndIgnoredWhenLive() {
        var core = Core.core()
        #expect(core.inboundDown(at: Self.start) == [.refused(.notResumed)])
        #expect(core.inboundBack(at: Self.start) == [.refused(.notResumed)])
        _ = core.resume(at: Self.start)
        #expect(core.inboundBack(at: Self.start + 1).isEmpty && core.state == .live)
        _ = core.inboundDown(at: Self.start + 2)
        _ = core.inboundDown(at: Self.start + 3)
        #expect(core.state == .catchingUp(CatchUp(cause: .inboundDown, since: Self.start + 2)))
    }
}
