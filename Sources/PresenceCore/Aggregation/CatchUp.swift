/// What the core's `catchingUp` phase holds: why the decision clock waits, since when, and when the
/// way in was back. It begins at a start (what the broker kept while the aggregator was stopped) or
/// when the way in goes down mid-run (what the broker, a hall broker and the nodes' spools keep
/// meanwhile); meanwhile ticks do not move the clock, which moves with the backlog's own times as
/// it arrives (`PresencePipeline.catchUp(awaitingNodesHeardSince:)`). `ending` says when it ends.
public struct CatchUp: Sendable, Equatable {
    public enum Cause: Sendable, Equatable {
        /// The aggregator started: the broker kept what came while it was stopped.
        case start
        /// The way in (a shard's broker session) went down mid-run.
        case inboundDown
    }

    /// Why catching up ends (`ending`).
    public enum Ending: Sendable, Equatable {
        /// Decisions are within the quiet window and the lateness of the wall clock.
        case caughtUp
        /// The way in is back and no sighting came for the quiet window, with no node awaited.
        case quiet
        /// At a start, `catchUpLimit` after it; after the way in was down, `catchUpLimit` after it
        /// was back: a backlog that does not drain does not hold decisions for ever.
        case limit
        /// The way in is still down `inboundDownHold` after it went: decisions go on without what
        /// is still coming, so that real absences end in exits.
        case released
    }

    public var cause: Cause
    /// When it began: the start, or when the way in went down, ms.
    public var since: Int64
    /// When the way in was last back in place (at a start, the subscriptions); nil while down.
    public var back: Int64?
    /// When a sighting last arrived (or the way in was last back).
    public var lastSighting: Int64
    /// Whether the nodes still awaited were given up, the hold's bound having passed.
    public var gaveUp = false

    public init(cause: Cause, since: Int64, back: Int64? = nil) {
        self.cause = cause
        self.since = since
        self.back = back
        lastSighting = since
    }

    /// Whether, and why, catching up ends at `now`, the clock being `lag` behind it and nodes
    /// still awaited or not (`awaiting`), with `configuration`'s bounds.
    public func ending(at now: Int64, lag: Int64, awaiting: Bool, configuration: AggregatorCore.Configuration) -> Ending? {
        let quietFor = configuration.catchUpQuiet
        switch (cause, back) {
        case (.inboundDown, nil):
            return TimeBounds.difference(now, since) >= configuration.inboundDownHold ? .released : nil
        case (.inboundDown, let back?):
            if lag <= quietFor + configuration.pipeline.lateness { return .caughtUp }
            if !awaiting, TimeBounds.difference(now, max(lastSighting, back)) >= quietFor { return .quiet }
            return TimeBounds.difference(now, back) >= configuration.catchUpLimit ? .limit : nil
        case (.start, let back):
            if lag <= quietFor + configuration.pipeline.lateness { return .caughtUp }
            if let back, TimeBounds.difference(now, max(lastSighting, back)) >= quietFor { return .quiet }
            return TimeBounds.difference(now, since) >= configuration.catchUpLimit ? .limit : nil
        }
    }

    /// Whether the nodes still awaited are to be given up at `now`: the way in went down
    /// `inboundDownHold` ago or more (once).
    public func givesUp(at now: Int64, configuration: AggregatorCore.Configuration) -> Bool {
        cause == .inboundDown && !gaveUp && TimeBounds.difference(now, since) >= configuration.inboundDownHold
    }
}
