import Logging
import PresenceCore
import PresencePostgres
import PresenceStore
import ServiceLifecycle
import Synchronization

/// Which of the venue's shards this aggregator decides for, through PostgreSQL advisory locks held
/// on one session it keeps (`ShardLocks`): it joins the aggregators running on the database under
/// its client id, and every `interval` takes free shards up to a fair share of the live ones
/// (`ShardShare`) and gives extras back when others join. A shard taken has its open sessions
/// resumed from the database; a shard given back has its users' last sightings stored before its
/// lock goes, so that the next owner resumes them where they were. An aggregator that dies loses
/// its locks with its session, and the others take its shards on their next round. The first
/// ownership is settled before the decision loop starts (`first()`); later ones go through the
/// loop's inbox. While the database is away the core keeps what it owns (nobody can take it
/// without the database); on reconnecting, shards another aggregator took meanwhile are dropped.
final class ShardOwnership: Service {
    private let clientID: String
    private let postgres: PostgresClient
    private let inbox: LoopInbox
    private let inbound: InboundConnection
    private let journal: Journal
    private let sharing: SharingState
    private let interval: Duration
    private let logger: Logger
    private let firstGrant = Mutex<(grant: ShardGrant?, waiters: [CheckedContinuation<ShardGrant?, Never>], done: Bool)>((nil, [], false))

    init(clientID: String, postgres: PostgresClient, inbox: LoopInbox, inbound: InboundConnection, journal: Journal, sharing: SharingState,
         interval: Duration = .seconds(1), logger: Logger) {
        self.sharing = sharing
        self.clientID = clientID
        self.postgres = postgres
        self.inbox = inbox
        self.inbound = inbound
        self.journal = journal
        self.interval = interval
        self.logger = logger
    }

    /// The first ownership, once settled; nil when the aggregator stops first.
    func first() async -> ShardGrant? {
        await withCheckedContinuation { continuation in
            let ready = firstGrant.withLock { state -> (Bool, ShardGrant?) in
                if !state.done { state.waiters.append(continuation) }
                return (state.done, state.grant)
            }
            if ready.0 { continuation.resume(returning: ready.1) }
        }
    }

    func run() async throws {
        defer { settleFirst(nil) }
        await cancelWhenGracefulShutdown { [self] in
            var owned: ShardSet?
            while !Task.isCancelled {
                do {
                    try await postgres.withConnection { db in try await rounds(db, owned: &owned) }
                    return
                } catch is CancellationError {
                    return
                } catch is PostgresClient.ClosedError {
                    return
                } catch {
                    logger.warning("lost the session that holds this aggregator's shards; they stay its own until the database answers again",
                                   metadata: ["error": "\(error)"])
                    guard (try? await Task.sleep(for: interval)) != nil else { return }
                }
            }
        }
    }

    /// Rounds on one session, until it fails or the service stops.
    private func rounds(_ db: PostgresConnection, owned: inout ShardSet?) async throws {
        // A client that vanishes (a machine off the network) lets its locks go within seconds.
        try await db.execute(script: "SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = 3")
        var held: Set<Int> = []
        /// The shard count `held` belongs to.
        var heldCount: Int?
        var joined = false
        var refused = false
        var deciding = true
        while !Task.isCancelled {
            if deciding, !joined {
                joined = try await db.joinAggregators(clientID: clientID)
                if !joined, !refused {
                    refused = true
                    logger.error("another aggregator runs with this client id on this database; this one takes no shard until it stops",
                                 metadata: ["client_id": "\(clientID)"])
                }
            }
            if deciding, joined {
                let count = try await db.shardCount().count
                if let old = heldCount, old != count, !held.isEmpty {
                    // A new count re-homes users: every shard of the old one goes back (the others'
                    // too), and the new count's are taken afresh once none of the old is held.
                    guard try await giveBackEverything(held, of: old, db, owned: &owned) else {
                        deciding = false
                        continue
                    }
                    held = []
                }
                heldCount = count
                let live = try await db.liveAggregators()
                sharing.set(shared: live > 1)
                inbound.followOthers(live > 1)
                let free = try await db.freeShards(below: count)
                let plan = ShardShare(count: count, live: live, held: held, free: free, start: Int(Shards.fnv1a32(clientID) % UInt32(count)))
                var taken: [Int] = []
                if await coreKnows(count, taking: plan.take) {
                    for shard in plan.take where try await db.takeShard(shard, of: count, clientID: clientID) { taken.append(shard) }
                }
                held.formUnion(taken)
                let keep = ShardSet(held.subtracting(plan.give))
                if owned != keep {
                    let sessions = taken.isEmpty ? [] : try await db.openSessions()
                    let zoneSessions = taken.isEmpty ? [] : try await db.openZoneSessions()
                    // Nil: the decision loop has stopped. The locks stay until the service stops, after
                    // the database writer has stored what the loop decided.
                    // The sessions of shards given back close first, so that the broker keeps what
                    // comes next for the next owner; those of shards taken open once the core owns them.
                    await inbound.receive(ShardSet((owned ?? .empty).sorted.filter(keep.contains)))
                    let end = await hand(ShardGrant(shards: keep, sessions: sessions, zoneSessions: zoneSessions, shared: live > 1))
                    deciding = end != nil
                    owned = keep
                    if deciding { await inbound.receive(keep) }
                    if let end, !plan.give.isEmpty {
                        // The next owner reads the database: what this one decided about them goes there first.
                        _ = await journal.waitUntilApplied(end)
                        for shard in plan.give { try await db.giveBackShard(shard, of: count) }
                        held.subtract(plan.give)
                    }
                    logger.info("shards owned", metadata: [
                        "shards": "\(keep)", "taken": "\(ShardSet(taken))", "given_back": "\(ShardSet(plan.give))", "aggregators": "\(live)",
                    ])
                }
            }
            guard (try? await Task.sleep(for: interval)) != nil else { return }
        }
    }

    /// Whether the core's registry has `count` shards, so that the users of shards it takes are
    /// resumed under their home in that count (the registry reloads beside the loop); always before
    /// the first grant, and when nothing is to be taken.
    private func coreKnows(_ count: Int, taking: [Int]) async -> Bool {
        guard !taking.isEmpty, firstGrant.withLock({ $0.done }) else { return true }
        return await inbox.answer(within: .seconds(5)) { $0.pipeline.registry.shards.count } == count
    }

    /// Gives back every shard `held` of the old `count`: the core lets their users go, the database
    /// stores what it decided, then the locks go. False when the decision loop has stopped (the
    /// locks stay until the service stops).
    private func giveBackEverything(_ held: Set<Int>, of count: Int, _ db: PostgresConnection, owned: inout ShardSet?) async throws -> Bool {
        await inbound.receive(.empty)
        owned = .empty
        guard let end = await hand(ShardGrant(shards: .empty)) else { return false }
        _ = await journal.waitUntilApplied(end)
        for shard in held { try await db.giveBackShard(shard, of: count) }
        logger.notice("the venue's shard count changed: every shard given back, to be shared anew", metadata: [
            "given_back": "\(ShardSet(held))", "old_count": "\(count)",
        ])
        return true
    }

    /// Hands `grant` to the core: the first one before the loop starts, later ones through the
    /// inbox. Returns the journal's end once the core's records about it are appended (nil when
    /// the loop has stopped).
    private func hand(_ grant: ShardGrant) async -> UInt64? {
        if settleFirst(grant) { return journal.status.end }
        let changed = await inbox.change { core in core.own(grant, at: WallClock.milliseconds()) }
        return changed ? journal.status.end : nil
    }

    /// Gives the first grant to whoever waits for it; false when it was given before.
    @discardableResult
    private func settleFirst(_ grant: ShardGrant?) -> Bool {
        let waiters = firstGrant.withLock { state -> [CheckedContinuation<ShardGrant?, Never>]? in
            guard !state.done else { return nil }
            state.done = true
            state.grant = grant
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters?.forEach { $0.resume(returning: grant) }
        return waiters != nil
    }

}
