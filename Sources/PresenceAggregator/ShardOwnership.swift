import Logging
import PresenceCore
import PresencePostgres
import PresenceStore
import ServiceLifecycle
import Synchronization

/// Which of the venue's shards this aggregator decides for, through PostgreSQL advisory locks held
/// on one session it keeps (`ShardLocks`). What to do is `ShardOwnershipMachine`'s to decide; this
/// shell carries out its actions (the locks and reads on the database, the grants to the decision
/// loop, the inbound connection's shard sessions, the wait for the database writer) and tells it
/// what came of them, a round every `interval`. The first grant is settled before the decision
/// loop starts (`first()`, which the core is made with); later ones go through the loop's inbox.
final class ShardOwnership: Service {
    private let clientID: String
    private let postgres: PostgresClient
    private let inbox: LoopInbox
    private let inbound: InboundConnection
    private let journal: Journal
    private let interval: Duration
    private let logger: Logger
    private let firstGrant = Mutex<(grant: ShardGrant?, waiters: [CheckedContinuation<ShardGrant?, Never>], done: Bool)>((nil, [], false))

    init(clientID: String, postgres: PostgresClient, inbox: LoopInbox, inbound: InboundConnection, journal: Journal, interval: Duration = .seconds(1),
         logger: Logger) {
        self.clientID = clientID
        self.postgres = postgres
        self.inbox = inbox
        self.inbound = inbound
        self.journal = journal
        self.interval = interval
        self.logger = logger
    }

    /// The first grant, once settled; nil when the aggregator stops first.
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
            var machine = ShardOwnershipMachine(clientID: clientID)
            while !Task.isCancelled {
                do {
                    try await postgres.withConnection { db in try await rounds(db, &machine) }
                    return
                } catch is CancellationError {
                    return
                } catch is PostgresClient.ClosedError {
                    return
                } catch {
                    machine.sessionLost()
                    logger.warning("lost the session that holds this aggregator's shards; they stay its own until the database answers again",
                                   metadata: ["error": "\(error)"])
                    guard (try? await Task.sleep(for: interval)) != nil else { return }
                }
            }
        }
    }

    /// Rounds on one session, until it fails or the service stops.
    private func rounds(_ db: PostgresConnection, _ machine: inout ShardOwnershipMachine) async throws {
        // A client that vanishes (a machine off the network) lets its locks go within seconds.
        try await db.execute(script: "SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = 3")
        var action = machine.sessionOpened()
        while !Task.isCancelled {
            guard let next = try await carryOut(action, db, &machine) else { return }
            action = next
        }
    }

    /// Does what `action` asks and returns what the machine says to do next; nil when the service
    /// stops between two rounds.
    private func carryOut(_ action: ShardOwnershipMachine.Action, _ db: PostgresConnection,
                          _ machine: inout ShardOwnershipMachine) async throws -> ShardOwnershipMachine.Action? {
        switch action {
        case .join:
            return machine.joined(try await db.joinAggregators(clientID: clientID))
        case .readCount:
            return machine.countRead(try await db.shardCount().count)
        case .readShare(let count):
            let live = try await db.liveAggregators()
            return machine.shareRead(live: live, free: try await db.freeShards(below: count))
        case .askCoreCount:
            return machine.coreCountRead(await inbox.answer(within: .seconds(5)) { $0.pipeline.registry.shards.count })
        case .lock(let shard, let count):
            let granted = try await db.takeShard(shard, of: count, clientID: clientID)
            return granted ? machine.lockGranted(shard) : machine.lockRefused(shard)
        case .readSessions:
            let sessions = try await db.openSessions()
            return machine.sessionsRead(sessions, zoneSessions: try await db.openZoneSessions())
        case .grant(let grant, let keeping):
            inbound.followOthers(grant.shared)
            await inbound.receive(keeping)
            let end = await hand(grant)
            if end != nil { await inbound.receive(grant.shards) }
            return machine.granted(journalEnd: end)
        case .waitForWriter(let end):
            _ = await journal.waitUntilApplied(end)
            return machine.writerCaughtUp()
        case .unlock(let shards, let count, let reason):
            for shard in shards.sorted { try await db.giveBackShard(shard, of: count) }
            if reason == .countChanged {
                logger.notice("the venue's shard count changed: every shard given back, to be shared anew", metadata: [
                    "given_back": "\(shards)", "old_count": "\(count)",
                ])
            }
            return machine.unlocked()
        case .endRound(let report):
            say(report)
            guard (try? await Task.sleep(for: interval)) != nil else { return nil }
            return machine.roundStarted()
        }
    }

    private func say(_ report: ShardOwnershipMachine.Report?) {
        switch report {
        case .refused:
            logger.error("another aggregator runs with this client id on this database; this one takes no shard until it stops",
                         metadata: ["client_id": "\(clientID)"])
        case .owned(let shards, let taken, let givenBack, let aggregators):
            logger.info("shards owned", metadata: ["shards": "\(shards)", "taken": "\(taken)", "given_back": "\(givenBack)", "aggregators": "\(aggregators)"])
        case nil:
            break
        }
    }

    /// Hands `grant` to the core: the first one before the loop starts, later ones through the
    /// inbox. Returns the journal's end once the core's records about it are appended (nil when
    /// the loop has stopped).
    private func hand(_ grant: ShardGrant) async -> UInt64? {
        if settleFirst(grant) { return journal.status.end }
        return await inbox.grant(grant) ? journal.status.end : nil
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
