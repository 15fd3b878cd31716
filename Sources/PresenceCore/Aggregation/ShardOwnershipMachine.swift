/// Which of the venue's shards an aggregator owns, decided without I/O: a value-type state machine
/// (postgres-nio's `PoolStateMachine` is the model) that the shell (`ShardOwnership`) drives. What
/// happened comes in as events: a session on the database opened or lost (the locks go with it),
/// a round started, and the answer to whatever the last action asked (joined or not, the venue's
/// shard count, how many aggregators run and which shards are free, a lock granted or refused,
/// the sessions read, the grant handed to the core, the database writer caught up, the locks
/// given back). Each event returns the one `Action` the shell carries out next, and answers with
/// the event it names, until `endRound`.
///
/// In a round, an aggregator that has joined (its member lock on its client id) reads the shard
/// count; a changed count gives every shard it holds back first (the core lets their users go, the
/// writer stores what it decided, then the locks go). It then reads how many aggregators run and
/// which shards are free, and plans a fair share (`ShardShare`): free shards are locked one by one
/// (after the first grant, only once the core's registry has the same count, so that homes are
/// reckoned alike), their sessions read, and the core is granted its shards; shards past its share
/// are given back once the writer has stored what the core decided about their users. The core is
/// granted anew whenever its shards or whether others share the venue change. While the database
/// is away the core keeps what it owns; a new session holds no lock, and its first round grants
/// what it could take again. Once the decision loop takes no more grants, nothing more is done.
public struct ShardOwnershipMachine: Sendable {
    /// Where the machine is, with what that part needs.
    enum State: Sendable, Equatable {
        /// No session on the database: no lock is held.
        case away
        /// On a session, between rounds.
        case between(Session)
        /// On a session, in a round, waiting for the answer to what it asked.
        case inRound(Session, Step)
        /// The decision loop takes no more grants: the locks stay until the service stops.
        case stopped
    }

    /// What one session on the database holds.
    struct Session: Sendable, Equatable {
        var joined = false
        /// Whether `Report.refused` was said on this session.
        var refusalSaid = false
        /// The shards whose locks this session holds, and the count they belong to.
        var held: Set<Int> = []
        var count: Int?
    }

    /// What a round waits for.
    enum Step: Sendable, Equatable {
        case joining
        case readingCount
        case readingShare(count: Int)
        /// A new count: the core is granted nothing, the writer catches up, the old locks go.
        case rehoming(Rehoming, old: Int, new: Int)
        case askingCore(Plan)
        /// Locking `Plan.take` from the index `next`.
        case locking(Plan, next: Int)
        case readingSessions(Plan)
        case granting(Plan, ShardGrant)
        case waitingToGiveBack(Plan)
        case givingBack(Plan)
    }

    enum Rehoming: Sendable, Equatable {
        case granting, waitingForWriter, unlocking
    }

    /// A round's share and what came of it so far.
    struct Plan: Sendable, Equatable {
        var count: Int
        var live: Int
        var share: ShardShare
        var taken: [Int] = []

        var shared: Bool { live > 1 }
    }

    /// Rotates the order free shards are tried in (`ShardShare`'s `start`), so that aggregators
    /// starting together try different shards first.
    let rotation: UInt32
    private(set) var state = State.away
    /// The shards the core owns; nil until the first grant (which the decision loop starts with).
    public private(set) var owned: ShardSet?
    /// Whether the last grant said other aggregators share the venue.
    public private(set) var shared = false

    /// The machine of the aggregator named `clientID` on the database.
    public init(clientID: String) {
        rotation = Shards.fnv1a32(clientID)
    }

    // MARK: The database session

    /// A session on the database is open (it holds no lock yet): the first round starts.
    public mutating func sessionOpened() -> Action {
        guard state != .stopped else { return .endRound(nil) }
        state = .between(Session())
        return roundStarted()
    }

    /// The session failed: its locks went with it. The core keeps what it owns (nobody can take it
    /// without the database) until a new session's round grants it anew.
    public mutating func sessionLost() {
        guard state != .stopped else { return }
        state = .away
    }

    /// The interval between rounds has passed.
    public mutating func roundStarted() -> Action {
        guard case .between(let session) = state else { return unexpected() }
        if session.joined {
            state = .inRound(session, .readingCount)
            return .readCount
        }
        state = .inRound(session, .joining)
        return .join
    }

    // MARK: Answers

    /// Whether the member lock on the client id was granted.
    public mutating func joined(_ granted: Bool) -> Action {
        guard case .inRound(var session, .joining) = state else { return unexpected() }
        guard granted else {
            let say = !session.refusalSaid
            session.refusalSaid = true
            state = .between(session)
            return .endRound(say ? .refused : nil)
        }
        session.joined = true
        state = .inRound(session, .readingCount)
        return .readCount
    }

    /// The venue's shard count.
    public mutating func countRead(_ count: Int) -> Action {
        guard case .inRound(var session, .readingCount) = state else { return unexpected() }
        if let old = session.count, old != count, !session.held.isEmpty {
            // A new count re-homes users: every shard of the old one goes back (the others' too),
            // and the new count's are taken afresh once none of the old is held.
            state = .inRound(session, .rehoming(.granting, old: old, new: count))
            return .grant(ShardGrant(shards: .empty, shared: shared), keeping: .empty)
        }
        session.count = count
        state = .inRound(session, .readingShare(count: count))
        return .readShare(count: count)
    }

    /// How many aggregators run, and which shards of the count nobody holds.
    public mutating func shareRead(live: Int, free: Set<Int>) -> Action {
        guard case .inRound(let session, .readingShare(let count)) = state else { return unexpected() }
        let start = Int(rotation % UInt32(max(1, count)))
        let plan = Plan(count: count, live: live, share: ShardShare(count: count, live: live, held: session.held, free: free, start: start))
        if plan.share.take.isEmpty { return conclude(plan, session) }
        guard owned != nil else { return lockNext(plan, from: 0, session) }
        state = .inRound(session, .askingCore(plan))
        return .askCoreCount
    }

    /// The shard count of the core's registry; nil when the loop did not answer in time.
    public mutating func coreCountRead(_ count: Int?) -> Action {
        guard case .inRound(let session, .askingCore(let plan)) = state else { return unexpected() }
        // Users are resumed under their home in the count the core knows: none is taken before it
        // knows this one (the registry reloads beside the loop).
        guard count == plan.count else { return conclude(plan, session) }
        return lockNext(plan, from: 0, session)
    }

    /// The lock of `shard` is this session's.
    public mutating func lockGranted(_ shard: Int) -> Action {
        guard case .inRound(var session, .locking(var plan, let next)) = state, plan.share.take[next] == shard else { return unexpected() }
        session.held.insert(shard)
        plan.taken.append(shard)
        return lockNext(plan, from: next + 1, session)
    }

    /// Another session holds the lock of `shard`.
    public mutating func lockRefused(_ shard: Int) -> Action {
        guard case .inRound(let session, .locking(let plan, let next)) = state, plan.share.take[next] == shard else { return unexpected() }
        return lockNext(plan, from: next + 1, session)
    }

    /// The open sessions and zone stays the database holds.
    public mutating func sessionsRead(_ sessions: [Presence], zoneSessions: [ZoneSession]) -> Action {
        guard case .inRound(let session, .readingSessions(let plan)) = state else { return unexpected() }
        return grant(plan, sessions: sessions, zoneSessions: zoneSessions, session)
    }

    /// The core took the grant, and the journal ended at `journalEnd` after the records it made
    /// of it; nil: the decision loop has stopped and takes no more grants.
    public mutating func granted(journalEnd: UInt64?) -> Action {
        switch state {
        case .inRound(let session, .rehoming(.granting, let old, let new)):
            owned = .empty
            guard let end = journalEnd else { return stop() }
            state = .inRound(session, .rehoming(.waitingForWriter, old: old, new: new))
            return .waitForWriter(end: end)
        case .inRound(let session, .granting(let plan, let grant)):
            owned = grant.shards
            shared = grant.shared
            guard let end = journalEnd else { return stop() }
            guard !plan.share.give.isEmpty else { return endRound(plan, session) }
            state = .inRound(session, .waitingToGiveBack(plan))
            return .waitForWriter(end: end)
        default:
            return unexpected()
        }
    }

    /// The database holds everything the core decided up to the end asked for.
    public mutating func writerCaughtUp() -> Action {
        switch state {
        case .inRound(let session, .rehoming(.waitingForWriter, let old, let new)):
            state = .inRound(session, .rehoming(.unlocking, old: old, new: new))
            return .unlock(ShardSet(session.held), of: old, because: .countChanged)
        case .inRound(let session, .waitingToGiveBack(let plan)):
            state = .inRound(session, .givingBack(plan))
            return .unlock(ShardSet(plan.share.give), of: plan.count, because: .share)
        default:
            return unexpected()
        }
    }

    /// The locks asked for are given back.
    public mutating func unlocked() -> Action {
        switch state {
        case .inRound(var session, .rehoming(.unlocking, _, let new)):
            session.held = []
            session.count = new
            state = .inRound(session, .readingShare(count: new))
            return .readShare(count: new)
        case .inRound(var session, .givingBack(let plan)):
            session.held.subtract(plan.share.give)
            return endRound(plan, session)
        default:
            return unexpected()
        }
    }

    // MARK: Steps

    /// Tries the next shard of the plan to take, or concludes once all were tried.
    private mutating func lockNext(_ plan: Plan, from next: Int, _ session: Session) -> Action {
        guard next < plan.share.take.count else { return conclude(plan, session) }
        state = .inRound(session, .locking(plan, next: next))
        return .lock(shard: plan.share.take[next], of: plan.count)
    }

    /// The shards held, less those to give back, are granted when they are not what the core owns
    /// (or whether others share the venue changed); the sessions are read first if shards were taken.
    private mutating func conclude(_ plan: Plan, _ session: Session) -> Action {
        let keep = ShardSet(session.held.subtracting(plan.share.give))
        guard owned != keep || shared != plan.shared else {
            state = .between(session)
            return .endRound(nil)
        }
        guard plan.taken.isEmpty else {
            state = .inRound(session, .readingSessions(plan))
            return .readSessions
        }
        return grant(plan, sessions: [], zoneSessions: [], session)
    }

    private mutating func grant(_ plan: Plan, sessions: [Presence], zoneSessions: [ZoneSession], _ session: Session) -> Action {
        let keep = ShardSet(session.held.subtracting(plan.share.give))
        let grant = ShardGrant(shards: keep, sessions: sessions, zoneSessions: zoneSessions, shared: plan.shared)
        state = .inRound(session, .granting(plan, grant))
        // The sessions of shards given back close first, so that the broker keeps what comes next
        // for the next owner; those of shards taken open once the core owns them.
        return .grant(grant, keeping: ShardSet((owned ?? .empty).sorted.filter(keep.contains)))
    }

    private mutating func endRound(_ plan: Plan, _ session: Session) -> Action {
        state = .between(session)
        return .endRound(.owned(shards: owned ?? .empty, taken: ShardSet(plan.taken), givenBack: ShardSet(plan.share.give), aggregators: plan.live))
    }

    private mutating func stop() -> Action {
        state = .stopped
        return .endRound(nil)
    }

    /// An event that answers nothing asked (a mistake of the shell's) ends the round where it is;
    /// the locks taken so far stay counted, and the next round starts from what is held.
    private mutating func unexpected() -> Action {
        switch state {
        case .inRound(let session, _): state = .between(session)
        case .away, .between, .stopped: break
        }
        return .endRound(nil)
    }
}
