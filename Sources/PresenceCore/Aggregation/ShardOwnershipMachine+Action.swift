/// What `ShardOwnershipMachine` asks of its shell, and what a round says when it ends.
extension ShardOwnershipMachine {
    /// What the shell does next, and the event that answers it.
    public enum Action: Sendable, Equatable {
        /// Join the aggregators running on the database (the member lock on the client id); answer
        /// `joined(_:)`.
        case join
        /// Read the venue's shard count; answer `countRead(_:)`.
        case readCount
        /// Read how many aggregators run and which shards of `count` nobody holds; answer
        /// `shareRead(live:free:)`.
        case readShare(count: Int)
        /// Ask the decision loop which shard count its core's registry has; answer
        /// `coreCountRead(_:)`.
        case askCoreCount
        /// Try the lock of `shard` of `count`; answer `lockGranted(_:)` or `lockRefused(_:)`.
        case lock(shard: Int, of: Int)
        /// Read the open sessions and zone stays the database holds (the shards just locked are
        /// this aggregator's: nobody changes theirs now); answer `sessionsRead(_:zoneSessions:)`.
        case readSessions
        /// Stop receiving the sightings of every shard but `keeping`, hand `grant` to the core,
        /// then receive the grant's shards' sightings, hearing the other aggregators while the
        /// grant says they share the venue; answer `granted(journalEnd:)`.
        case grant(ShardGrant, keeping: ShardSet)
        /// Wait until the database writer has stored the journal up to `end` (all the core
        /// decided before the grant that lets the shards go); answer `writerCaughtUp()`.
        case waitForWriter(end: UInt64)
        /// Give back the locks of `shards` of `count`; answer `unlocked()`.
        case unlock(ShardSet, of: Int, because: Unlocking)
        /// The round is over: the next starts with `roundStarted()`.
        case endRound(Report?)
    }

    /// Why shards are given back.
    public enum Unlocking: Sendable, Equatable {
        /// Past this aggregator's fair share (another joined) or past a smaller count.
        case share
        /// The venue's count changed: every shard of the old one goes back, to be shared anew.
        case countChanged
    }

    /// What a round that ended has to say.
    public enum Report: Sendable, Equatable {
        /// Another aggregator runs with this client id on this database: this one takes no shard
        /// until it stops (said once per session).
        case refused
        /// The core was granted `shards`, having taken `taken` and given back `givenBack`, with
        /// `aggregators` running.
        case owned(shards: ShardSet, taken: ShardSet, givenBack: ShardSet, aggregators: Int)
    }
}
