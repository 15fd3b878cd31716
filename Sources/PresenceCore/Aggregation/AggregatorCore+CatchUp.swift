/// Catching up: after a start, and while the way in is down and once it is back, the decision
/// clock waits for input known to be still coming, so that it is decided in its own time.
extension AggregatorCore {
    /// Whether `subscribed(at:)` was called.
    public var isSubscribed: Bool { subscribedAt != nil }

    /// The inbound subscriptions are in place at `now` (the first time): from then on, a quiet
    /// moment means the broker's backlog is drained.
    public mutating func subscribed(at now: Int64) {
        guard subscribedAt == nil else { return }
        let now = TimeBounds.clamped(now)
        subscribedAt = now
        if case .catchingUp(var catchUp) = state, catchUp.cause == .start, catchUp.back == nil {
            catchUp.back = now
            state = .catchingUp(catchUp)
        }
    }

    /// The way in (a broker session that reads the nodes' batches) has been down since `now`:
    /// the broker, a hall broker's bridge queue or the nodes' spools keep what is said meanwhile,
    /// so the clock waits (`Configuration.inboundDownHold` at most) and, once the way in is back
    /// (`inboundBack(at:)`), moves with the backlog's own times, not past the nodes heard just
    /// before (`Configuration.awaitedWithin`) until each is heard live again. Nothing changes with
    /// an `inboundDownHold` of 0.
    public mutating func inboundDown(at now: Int64) -> [Action] {
        let now = TimeBounds.clamped(now)
        switch state {
        case .starting:
            return [.refused(.notResumed)]
        case .finished:
            return []
        case .catchingUp(var catchUp):
            catchUp.back = nil
            state = .catchingUp(catchUp)
            return []
        case .live:
            guard configuration.inboundDownHold > 0 else { return [] }
            let awaited = pipeline.catchUp(awaitingNodesHeardSince: TimeBounds.difference(now, configuration.awaitedWithin))
            state = .catchingUp(CatchUp(cause: .inboundDown, since: now))
            return [.log(LogLine(.notice, "the way in is down: decisions wait for what the nodes say meanwhile", [
                "awaited_nodes": "\(awaited)", "hold_ms": "\(configuration.inboundDownHold)",
            ]))]
        }
    }

    /// The way in is back at `now`: what was kept comes in, and is decided in its own time.
    public mutating func inboundBack(at now: Int64) -> [Action] {
        let now = TimeBounds.clamped(now)
        switch state {
        case .starting:
            return [.refused(.notResumed)]
        case .finished, .live:
            return []
        case .catchingUp(var catchUp):
            guard catchUp.back == nil else { return [] }
            catchUp.back = now
            state = .catchingUp(catchUp)
            guard catchUp.cause == .inboundDown else { return [] }
            return [.log(LogLine(.notice, "the way in is back: catching up with what was kept", [
                "down_ms": "\(TimeBounds.difference(now, catchUp.since))", "awaited_nodes": "\(pipeline.awaited?.count ?? 0)",
            ]))]
        }
    }

    /// A batch or a foreign node's report arrived at `time`.
    mutating func sightingArrived(at time: Int64) {
        guard case .catchingUp(var catchUp) = state else { return }
        catchUp.lastSighting = time
        state = .catchingUp(catchUp)
    }

    /// While catching up, at `now`: gives up the nodes awaited once the hold's bound has passed,
    /// and ends catching up when `CatchUp.ending` says so (the clock then moves on with the
    /// ticks). Returns whether it ended.
    mutating func catchUpEnds(at now: Int64, into actions: inout [Action]) -> Bool {
        guard case .catchingUp(var catchUp) = state else { return true }
        if catchUp.givesUp(at: now, configuration: configuration) {
            catchUp.gaveUp = true
            state = .catchingUp(catchUp)
            let given = pipeline.giveUpAwaitedNodes()
            if given > 0 {
                actions.append(.log(LogLine(.warning, "stopped waiting for nodes not heard again since the way in was down", [
                    "nodes": "\(given)", "waited_ms": "\(TimeBounds.difference(now, catchUp.since))",
                ])))
            }
        }
        let lag = TimeBounds.difference(now, pipeline.clock)
        let awaiting = !(pipeline.awaited?.isEmpty ?? true)
        guard let ending = catchUp.ending(at: now, lag: lag, awaiting: awaiting, configuration: configuration) else { return false }
        state = .live
        pipeline.goLive()
        switch (catchUp.cause, ending) {
        case (.start, _):
            actions.append(.log(LogLine(.notice, "caught up with what the broker kept", [
                "batches": "\(pipeline.counters.batches)", "clock_behind_ms": "\(lag)",
            ])))
        case (.inboundDown, .released):
            actions.append(.log(LogLine(.warning, "the way in is still down: decisions go on, and what it kept will come late", [
                "down_ms": "\(TimeBounds.difference(now, catchUp.since))",
            ])))
        case (.inboundDown, _):
            actions.append(.log(LogLine(.notice, "caught up with what came while the way in was down", [
                "down_ms": "\(TimeBounds.difference(catchUp.back ?? now, catchUp.since))", "clock_behind_ms": "\(lag)", "ended": "\(ending)",
            ])))
        }
        return true
    }

    /// While catching up, at `now`: the counters only, when due (the metrics and the stats say how
    /// far behind decisions are).
    mutating func reportCounters(at now: Int64, into actions: inout [Action]) {
        if configuration.page, TimeBounds.difference(now, progressAt) >= configuration.progressInterval {
            progressAt = now
            actions.append(.statistics(statistics(at: now), report: false))
        }
        reportStatistics(at: now, into: &actions)
    }
}
