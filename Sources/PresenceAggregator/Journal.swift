import Foundation
import Logging
import PresenceCore
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// The aggregator's local journal: every record the decision loop makes is appended here, made
/// durable (written and flushed, many records per flush), and only then read by the publisher and
/// the database writer, each at its own pace from its own cursor. `JournalLedger` decides what
/// happens; this service opens the folder for one database (`open(for:storedJournal:)`), and its
/// `run()` owns the thread that carries out the ledger's work (every file operation) until the
/// service is asked to stop. The loop never waits: appending only queues bytes.
///
/// `@unchecked Sendable`: every stored property that changes is read and written only with
/// `condition` locked, and file descriptors are used only by the journal's thread.
final class Journal: Service, @unchecked Sendable {
    typealias Entry = JournalLedger.Entry
    typealias Consumer = JournalLedger.Reader

    /// What the journal holds and how far each part has gone, for the stats.
    struct Status: Sendable, Equatable {
        var end: UInt64 = 0
        var durable: UInt64 = 0
        var retainedBytes: UInt64 = 0
        var published: UInt64 = 0
        var applied: UInt64 = 0
    }

    private let folder: String
    private let configuration: JournalLedger.Configuration
    private let logger: Logger
    private let origin = ContinuousClock.now
    private let condition = NSCondition()

    // Guarded by `condition`.
    private var ledger: JournalLedger?
    private var openedIdentity = ""
    /// The topics its records are published under (its binding's prefix), for records of an older layout.
    private var topics: Topics?
    private var lockDescriptor: Int32 = -1
    /// No journal will be opened: appending finished (or the service stopped) first.
    private var abandoned = false
    private var openWaiters: [CheckedContinuation<Void, Never>] = []
    private var readers: [JournalLedger.Waiter: CheckedContinuation<[Entry], Never>] = [:]
    private var nextWaiter: JournalLedger.Waiter = 0
    /// Who waits for the database writer to reach a position (`waitUntilApplied`).
    private var appliedWaiters: [JournalLedger.Waiter: (position: UInt64, continuation: CheckedContinuation<Bool, Never>)] = [:]
    private var stopped = false

    /// A journal in `directory`, not yet opened: readers wait until `open(for:storedJournal:)`.
    init(directory: String, segmentBytes: UInt64 = 64 << 20, maximumBytes: UInt64 = 1 << 30, coalescingInterval: Int64 = 60_000,
         cacheBytes: UInt64 = 32 << 20, logger: Logger) {
        folder = directory
        var configuration = JournalLedger.Configuration()
        configuration.segmentBytes = segmentBytes
        configuration.maximumBytes = maximumBytes
        configuration.coalescingInterval = coalescingInterval
        configuration.cacheBytes = cacheBytes
        self.configuration = configuration
        self.logger = logger
    }

    /// The journal's random identity (empty until opened): positions mean something only within one journal.
    var identity: String {
        locked { openedIdentity }
    }

    /// Opens (or creates) the journal for `binding`: takes its lock, moves aside a journal written
    /// for another database or topic prefix (`storedJournal` is the journal identity the database
    /// last applied, if any), and cuts a torn tail left by a crash.
    func open(for binding: JournalBinding, storedJournal: String?) throws {
        let (lock, identity) = try JournalFiles.claim(folder, for: binding, storedJournal: storedJournal, logger: logger)
        do {
            let found = try JournalFiles.segments(in: folder)
            let last = try found.last.map { try JournalFiles.read($0.path, from: 0, count: Int(try JournalFiles.size($0.path))) } ?? []
            let ledger = JournalLedger(configuration: configuration,
                                       segments: try found.map { JournalLedger.Segment(start: $0.start, size: try JournalFiles.size($0.path)) },
                                       lastSegmentBytes: last[...], savedCursors: JournalFiles.cursors(in: folder))
            let torn = JournalLedger.tornBytes(of: last[...])
            if torn > 0, let segment = found.last {
                logger.warning("cut a torn record from the end of the journal", metadata: ["segment": "\(segment.path)", "bytes": "\(torn)"])
                try JournalFiles.truncate(segment.path, to: UInt64(last.count - torn))
            }
            let topics = try Topics(prefix: binding.topicPrefix)
            let waiting = locked { () -> [CheckedContinuation<Void, Never>] in
                self.ledger = ledger
                self.topics = topics
                openedIdentity = identity
                lockDescriptor = lock
                defer { openWaiters = [] }
                return openWaiters
            }
            for waiter in waiting { waiter.resume() }
        } catch {
            Glibc.close(lock)
            throw error
        }
    }

    /// Runs the journal's thread once the journal is opened, until the service is asked to stop:
    /// then what is queued is written, the cursors are saved, and the lock is released.
    func run() async throws {
        await withTaskCancellationOrGracefulShutdownHandler {
            await waitUntilOpen()
            guard locked({ ledger != nil }) else { return }
            await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                let thread = Thread { [self] in
                    work()
                    finished.resume()
                }
                thread.name = "journal"
                thread.start()
            }
        } onCancelOrGracefulShutdown: { [self] in
            stop()
        }
        let lock = locked { () -> Int32 in
            defer { lockDescriptor = -1 }
            return lockDescriptor
        }
        if lock >= 0 { Glibc.close(lock) }
    }

    /// Waits until the journal is opened, or will never be.
    func waitUntilOpen() async {
        await withCheckedContinuation { continuation in
            let ready = locked { () -> Bool in
                if ledger != nil || abandoned { return true }
                openWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Where `consumer` had got to when the journal was opened (or since).
    func cursor(of consumer: Consumer) -> UInt64 {
        locked { ledger?.cursors[consumer] ?? 0 }
    }

    /// The oldest position still held.
    var start: UInt64 {
        locked { ledger?.start ?? 0 }
    }

    var status: Status {
        locked {
            guard let ledger else { return Status() }
            return Status(end: ledger.end, durable: ledger.durable, retainedBytes: ledger.heldBytes, published: ledger.cursors[.publisher] ?? 0,
                          applied: ledger.cursors[.database] ?? 0)
        }
    }

    /// Queues a record; the journal's thread writes and flushes it soon, with whatever else came.
    func append(_ record: OutboundRecord) {
        let now = elapsed()
        condition.lock()
        let queued = ledger?.append(record, at: now)
        condition.signal()
        condition.unlock()
        if queued != true { logger.critical("a record was dropped: too large for the journal, or the journal is not open") }
    }

    /// No more records: what is queued (and progress gathered) is written, and readers at the end
    /// get an empty answer.
    func finishAppending() {
        settle { ledger in
            guard ledger != nil else {
                abandoned = true
                return []
            }
            return ledger?.finishAppending() ?? []
        }
    }

    /// Up to `limit` durable records from `cursor` (the end of the last one read), waiting for
    /// some if there are none yet. Empty once appending has finished and everything was read, when
    /// the journal stops, or when the calling task is cancelled.
    func records(from cursor: UInt64, limit: Int) async -> [Entry] {
        await waitUntilOpen()
        let waiter = locked { () -> JournalLedger.Waiter in
            nextWaiter += 1
            return nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[Entry], Never>) in
                condition.lock()
                var answer: [Entry]? = []
                if !Task.isCancelled, let outcome = ledger?.read(from: cursor, limit: limit, for: waiter) {
                    switch outcome {
                    case .records(let entries):
                        answer = entries
                    case .waiting:
                        readers[waiter] = continuation
                        answer = nil
                        condition.signal()
                    }
                }
                condition.unlock()
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let continuation = locked { ledger?.cancel(waiter) == true ? readers.removeValue(forKey: waiter) : nil }
            continuation?.resume(returning: [])
        }
    }

    /// `consumer` is done with everything before `cursor`: once both are, it can go.
    func consumed(_ consumer: Consumer, upTo cursor: UInt64) {
        condition.lock()
        ledger?.consumed(consumer, upTo: cursor)
        var reached: [CheckedContinuation<Bool, Never>] = []
        if consumer == .database, let applied = ledger?.cursors[.database] {
            for (waiter, wait) in appliedWaiters where wait.position <= applied {
                appliedWaiters[waiter] = nil
                reached.append(wait.continuation)
            }
        }
        condition.signal()
        condition.unlock()
        for continuation in reached { continuation.resume(returning: true) }
    }

    /// Waits until the database writer has applied everything before `position`: true then;
    /// false when the journal stops or the calling task is cancelled first.
    func waitUntilApplied(_ position: UInt64) async -> Bool {
        let waiter = locked { () -> JournalLedger.Waiter in
            nextWaiter += 1
            return nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                condition.lock()
                let applied = ledger?.cursors[.database] ?? 0
                let answer: Bool? = applied >= position ? true : (stopped || Task.isCancelled ? false : nil)
                if answer == nil { appliedWaiters[waiter] = (position, continuation) }
                condition.unlock()
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let wait = locked { appliedWaiters.removeValue(forKey: waiter) }
            wait?.continuation.resume(returning: false)
        }
    }

    /// Asks the thread to end once what is queued is written; waiting readers get an empty answer.
    private func stop() {
        let waiting = locked { () -> [CheckedContinuation<Bool, Never>] in
            stopped = true
            defer { appliedWaiters = [:] }
            return appliedWaiters.values.map(\.continuation)
        }
        for continuation in waiting { continuation.resume(returning: false) }
        settle { ledger in
            guard ledger != nil else {
                abandoned = true
                return []
            }
            return ledger?.stop() ?? []
        }
    }

    // MARK: The journal's thread

    /// Carries out the ledger's work until it says stop.
    private func work() {
        var segment: (start: UInt64, descriptor: Int32)?
        defer { if let segment { Glibc.close(segment.descriptor) } }
        while true {
            condition.lock()
            var next = ledger?.nextWork(at: elapsed()) ?? .stop
            while case .wait(let until) = next {
                if let until {
                    _ = condition.wait(until: Date(timeIntervalSinceNow: Double(max(0, until - elapsed())) / 1000))
                } else {
                    condition.wait()
                }
                next = ledger?.nextWork(at: elapsed()) ?? .stop
            }
            condition.unlock()
            switch next {
            case .write(let batch):
                do {
                    for chunk in batch.chunks {
                        if chunk.opensSegment || segment?.start != chunk.segment {
                            if let open = segment { Glibc.close(open.descriptor) }
                            segment = nil
                            segment = (chunk.segment, try JournalFiles.openForAppending(path(of: chunk.segment)))
                        }
                        guard let open = segment else { continue }
                        try JournalFiles.write(chunk.bytes, to: open.descriptor, path: path(of: chunk.segment))
                        try JournalFiles.sync(open.descriptor, path: path(of: chunk.segment))
                    }
                    settle { $0?.wrote(batch) ?? [] }
                } catch {
                    logger.critical("cannot write the journal; retrying", metadata: ["error": "\(error)"])
                    if let open = segment { Glibc.close(open.descriptor) }
                    segment = nil
                    for chunk in batch.chunks { try? JournalFiles.truncate(path(of: chunk.segment), to: chunk.offset) }
                    locked { ledger?.writeFailed(batch) }
                    usleep(1_000_000)
                }
            case .read(let request):
                var entries: [Entry] = []
                do {
                    let published = locked { topics } ?? Topics.standard
                    entries = try JournalLedger.collect(request, topics: published) { start, offset, count in try JournalFiles.read(path(of: start), from: offset, count: count) }
                } catch {
                    logger.critical("cannot read the journal", metadata: ["error": "\(error)", "from": "\(request.cursor)"])
                }
                settle { ledger in ledger?.served(request.waiter, entries: entries).map { [$0] } ?? [] }
            case .save(let save):
                do {
                    try JournalFiles.saveCursors(save.cursors, in: folder)
                    // The ledger lets go of the segments before their files go, so that no read
                    // is ever sent to a file that is no longer there.
                    locked { ledger?.saved(save, at: elapsed()) }
                    for start in save.deleting {
                        do { try JournalFiles.remove(path(of: start)) } catch { logger.warning("cannot delete a journal segment", metadata: ["error": "\(error)"]) }
                    }
                } catch {
                    logger.warning("cannot save the journal's cursors", metadata: ["error": "\(error)"])
                    locked { ledger?.saveFailed(at: elapsed()) }
                }
            case .stop, .wait:
                return
            }
        }
    }

    private func path(of segment: UInt64) -> String {
        folder + "/" + JournalFiles.segmentName(start: segment)
    }

    /// Milliseconds since the journal was made, on the monotonic clock.
    private func elapsed() -> Int64 {
        let elapsed = (ContinuousClock.now - origin).components
        return elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
    }

    /// Changes the ledger and resumes the readers its answers name (outside the lock).
    private func settle(_ change: (inout JournalLedger?) -> [JournalLedger.Answer]) {
        condition.lock()
        let answers = change(&ledger)
        var resumed: [(CheckedContinuation<[Entry], Never>, [Entry])] = []
        for answer in answers {
            if let continuation = readers.removeValue(forKey: answer.waiter) { resumed.append((continuation, answer.entries)) }
        }
        let opening = abandoned ? openWaiters : []
        if abandoned { openWaiters = [] }
        condition.signal()
        condition.unlock()
        for (continuation, entries) in resumed { continuation.resume(returning: entries) }
        for waiter in opening { waiter.resume() }
    }

    /// Runs `body` with `condition` locked (call without it).
    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }
}
