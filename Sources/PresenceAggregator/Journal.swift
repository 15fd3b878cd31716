import DequeModule
import Foundation
import Logging
import PresenceCore

#if canImport(Glibc)
import Glibc
#endif

/// The aggregator's local journal: every record the decision loop makes is appended here, made
/// durable (written and flushed, many records per flush), and only then read by the publisher and
/// the database writer, each at its own pace from its own cursor. A record stays until both have
/// passed it; then whole segments are deleted. The loop never waits: appending only queues bytes
/// for the journal's own thread, which does every file operation.
///
/// Past `maximumBytes` retained (a long database outage), progress records are gathered in memory
/// and written as one at most every `coalescingInterval`; events are always written.
///
/// `@unchecked Sendable`: every stored property that changes is read and written only with
/// `condition` locked, and file descriptors are used only by the journal's thread.
final class Journal: @unchecked Sendable {
    /// A record and where it lies: from `start` to `end` (exclusive), positions in the journal's bytes.
    struct Entry: Sendable {
        var start: UInt64
        var end: UInt64
        var record: OutboundRecord
    }

    /// Who reads the journal.
    enum Consumer: String, Sendable, CaseIterable {
        case publisher = "published"
        case database = "applied"
    }

    /// What the journal holds and how far each part has gone, for the stats.
    struct Status: Sendable, Equatable {
        var end: UInt64
        var durable: UInt64
        var retainedBytes: UInt64
        var published: UInt64
        var applied: UInt64
    }

    private let folder: String
    private let segmentBytes: UInt64
    private let maximumBytes: UInt64
    private let coalescingInterval: Int64
    private let logger: Logger
    private let condition = NSCondition()

    // Guarded by `condition`.
    /// The journal's random identity, once opened: positions mean something only within one journal.
    private var openedIdentity = ""
    private var lockDescriptor: Int32 = -1
    private var opened = false
    private var openWaiters: [CheckedContinuation<Void, Never>] = []
    private var segments: [JournalFiles.Segment] = []
    private var pending: [UInt8] = []
    private var pendingEntries: [Entry] = []
    private var end: UInt64 = 0
    private var durable: UInt64 = 0
    private var cache = Deque<Entry>()
    private var cacheBytes: UInt64 = 0
    private var cursors: [Consumer: UInt64] = [:]
    private var savedCursors: [Consumer: UInt64] = [:]
    private var waiters: [UInt64: Waiter] = [:]
    private var readRequests: [(cursor: UInt64, limit: Int, waiter: UInt64)] = []
    private var nextWaiter: UInt64 = 0
    private var coalesced: OutboundRecord.Progress?
    private var coalescedAt: Int64 = .min
    private var appending = true
    private var stopping = false
    private var stopped = false

    private struct Waiter {
        var cursor: UInt64
        var limit: Int
        var continuation: CheckedContinuation<[Entry], Never>
    }

    static let cacheLimit: UInt64 = 32 << 20
    /// Cursors are saved at most this often (after a crash, at most this much is read again).
    static let cursorInterval: Duration = .milliseconds(100)

    /// A journal in `directory`, not yet opened: readers wait until `open(for:storedJournal:)`.
    init(directory: String, segmentBytes: UInt64 = 64 << 20, maximumBytes: UInt64 = 1 << 30, coalescingInterval: Int64 = 60_000,
         logger: Logger) {
        folder = directory
        self.segmentBytes = segmentBytes
        self.maximumBytes = maximumBytes
        self.coalescingInterval = coalescingInterval
        self.logger = logger
    }

    /// The journal's random identity (empty until opened).
    var identity: String {
        locked { openedIdentity }
    }

    /// Opens (or creates) the journal for `binding`: takes its lock, moves aside a journal written
    /// for another database or topic prefix (`storedJournal` is the journal identity the database
    /// last applied, if any), cuts a torn tail left by a crash, and starts its thread.
    func open(for binding: JournalBinding, storedJournal: String?) throws {
        let directory = folder
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var lock = try JournalFiles.lock(directory + "/lock")
        let bindingPath = directory + "/binding"
        let identityPath = directory + "/identity"
        let saved = (try? String(contentsOfFile: bindingPath, encoding: .utf8)).flatMap(JournalBinding.init(text:))
        let savedIdentity = (try? String(contentsOfFile: identityPath, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        let holdsRecords = try JournalFiles.segments(in: directory).contains { try JournalFiles.size($0.path) > 0 }
        let verdict = binding.verdict(saved: saved, holdsRecords: holdsRecords, knownToDatabase: savedIdentity != nil && savedIdentity == storedJournal)
        if case .moveAside(let reason) = verdict {
            let stamp = directory + ".moved-" + ISO8601Text.string(milliseconds: WallClock.milliseconds()).filter { $0 != "-" && $0 != ":" }
            let aside = (0...).lazy.map { $0 == 0 ? stamp : stamp + "-\($0)" }.first { !FileManager.default.fileExists(atPath: $0) } ?? stamp
            guard rename(directory, aside) == 0 else {
                Glibc.close(lock)
                throw AggregatorError("cannot move the journal \(directory) aside to \(aside): \(String(cString: strerror(errno)))")
            }
            Glibc.close(lock)
            logger.warning("moved aside a journal that belongs to another database or topic prefix; nothing in it is decided, published or stored here",
                           metadata: ["reason": "\(reason)", "moved_to": "\(aside)",
                                      "hint": "give each database its own --client-id or --state-dir; to apply the old journal to its own database, move it back while the aggregator is stopped"])
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            lock = try JournalFiles.lock(directory + "/lock")
        }
        if saved != binding || verdict != .keep { try JournalFiles.replace(bindingPath, with: binding.text) }
        let identity: String
        if verdict == .keep, let savedIdentity, !savedIdentity.isEmpty {
            identity = savedIdentity
        } else {
            identity = UUID().uuidString.lowercased()
            try JournalFiles.replace(identityPath, with: identity + "\n")
        }
        var cursors: [Consumer: UInt64] = [:]
        if let text = try? String(contentsOfFile: directory + "/cursors", encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ")
                if parts.count == 2, let consumer = Consumer(rawValue: String(parts[0])), let value = UInt64(parts[1]) { cursors[consumer] = value }
            }
        }
        var segments = try JournalFiles.segments(in: directory)
        if segments.isEmpty {
            let start = cursors.values.max() ?? 0
            segments = [JournalFiles.Segment(start: start, path: directory + "/" + JournalFiles.segmentName(start: start))]
            Glibc.close(try JournalFiles.openForAppending(segments[0].path))
        }
        guard let last = segments.last, let first = segments.first else { preconditionFailure("a journal has a segment") }
        let size = try JournalFiles.size(last.path)
        let scan = JournalFrame.scan(try JournalFiles.read(last.path, from: 0, count: Int(size))[...])
        if scan.torn {
            logger.warning("cut a torn record from the end of the journal", metadata: [
                "segment": "\(last.path)", "bytes": "\(size - UInt64(scan.end))",
            ])
            try JournalFiles.truncate(last.path, to: UInt64(scan.end))
        }
        let end = last.start + UInt64(scan.end)
        for consumer in Consumer.allCases { cursors[consumer] = min(max(cursors[consumer] ?? first.start, first.start), end) }
        let waiting = locked { () -> [CheckedContinuation<Void, Never>] in
            openedIdentity = identity
            lockDescriptor = lock
            self.segments = segments
            self.end = end
            durable = end
            self.cursors = cursors
            opened = true
            defer { openWaiters = [] }
            return openWaiters
        }
        let thread = Thread { [self] in run() }
        thread.name = "journal"
        thread.start()
        for waiter in waiting { waiter.resume() }
    }

    /// Waits until the journal is opened, or will never be (appending finished first).
    func waitUntilOpen() async {
        await withCheckedContinuation { continuation in
            let ready = locked { () -> Bool in
                if opened || !appending { return true }
                openWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Where `consumer` had got to when the journal was opened (or since).
    func cursor(of consumer: Consumer) -> UInt64 {
        locked { cursors[consumer] ?? 0 }
    }

    /// The oldest position still held.
    var start: UInt64 {
        locked { segments.first?.start ?? 0 }
    }

    var status: Status {
        locked {
            Status(end: end, durable: durable, retainedBytes: end - (segments.first?.start ?? 0),
                   published: cursors[.publisher] ?? 0, applied: cursors[.database] ?? 0)
        }
    }

    /// Queues a record; the journal's thread writes and flushes it soon, with whatever else came.
    func append(_ record: OutboundRecord) {
        let now = WallClock.milliseconds()
        condition.lock()
        defer { condition.unlock() }
        guard appending else { return }
        if case .progress(let progress) = record, end - (segments.first?.start ?? 0) > maximumBytes {
            coalesced = Self.merge(coalesced, progress)
            guard TimeBounds.difference(now, coalescedAt) >= coalescingInterval, let merged = coalesced else { return }
            coalesced = nil
            coalescedAt = now
            enqueue(.progress(merged))
        } else {
            enqueue(record)
        }
    }

    /// No more records: what is queued (and progress gathered) is written, and readers at the end
    /// get an empty answer.
    func finishAppending() {
        condition.lock()
        if appending, let merged = coalesced {
            coalesced = nil
            enqueue(.progress(merged))
        }
        appending = false
        let answers = answerWaiters()
        let openWaiters = self.openWaiters
        self.openWaiters = []
        condition.signal()
        condition.unlock()
        for (continuation, entries) in answers { continuation.resume(returning: entries) }
        for waiter in openWaiters { waiter.resume() }
    }

    /// Frames `record` and queues it for the journal's thread (with `condition` locked).
    private func enqueue(_ record: OutboundRecord) {
        let body = JournalCodec.encode(record)
        guard body.count <= JournalFrame.maximumBody else {
            logger.critical("a record too large for the journal was dropped", metadata: ["bytes": "\(body.count)"])
            return
        }
        let frame = JournalFrame.frame(body)
        let entry = Entry(start: end, end: end + UInt64(frame.count), record: record)
        pending += frame
        pendingEntries.append(entry)
        end = entry.end
        condition.signal()
    }

    /// Up to `limit` durable records from `cursor` (the end of the last one read), waiting for
    /// some if there are none yet. Empty once appending has finished and everything was read, or
    /// when the calling task is cancelled.
    func records(from cursor: UInt64, limit: Int) async -> [Entry] {
        let id = locked { () -> UInt64 in
            nextWaiter += 1
            return nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[Entry], Never>) in
                condition.lock()
                // A cursor from before what is still held starts at the oldest record held.
                let cursor = max(cursor, segments.first?.start ?? 0)
                let answer: [Entry]?
                if Task.isCancelled {
                    answer = []
                } else if cursor < durable {
                    if let cached = cached(from: cursor, limit: limit) {
                        answer = cached
                    } else {
                        waiters[id] = Waiter(cursor: cursor, limit: limit, continuation: continuation)
                        readRequests.append((cursor, limit, id))
                        condition.signal()
                        answer = nil
                    }
                } else if !appending && cursor >= end {
                    answer = []
                } else {
                    waiters[id] = Waiter(cursor: cursor, limit: limit, continuation: continuation)
                    answer = nil
                }
                condition.unlock()
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let waiter = locked { waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: [])
        }
    }

    /// `consumer` is done with everything before `cursor`: once both are, it can go.
    func consumed(_ consumer: Consumer, upTo cursor: UInt64) {
        condition.lock()
        if cursor > cursors[consumer] ?? 0 {
            cursors[consumer] = min(cursor, durable)
            condition.signal()
        }
        condition.unlock()
    }

    /// Writes what is queued, saves the cursors, stops the thread and releases the lock.
    func close() {
        condition.lock()
        guard opened else {
            appending = false
            condition.unlock()
            return
        }
        appending = false
        stopping = true
        condition.signal()
        while !stopped { condition.wait() }
        condition.unlock()
        Glibc.close(lockDescriptor)
    }

    // MARK: The journal's thread

    private func run() {
        var descriptor: Int32 = -1
        var written: UInt64 = 0
        var savedAt = ContinuousClock.now - Self.cursorInterval
        while true {
            condition.lock()
            while pending.isEmpty && readRequests.isEmpty && !stopping {
                // Cursors move with every acknowledgement: saved at most every `cursorInterval`.
                guard savedCursors != cursors else {
                    condition.wait()
                    continue
                }
                let due = savedAt + Self.cursorInterval
                if ContinuousClock.now >= due { break }
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double((due - ContinuousClock.now) / .microseconds(1)) / 1e6))
            }
            let bytes = pending
            let entries = pendingEntries
            let requests = readRequests
            let trimTo = cursors.values.min() ?? 0
            let cursorsToSave = cursors != savedCursors && (ContinuousClock.now - savedAt >= Self.cursorInterval || stopping) ? cursors : nil
            let finished = stopping && pending.isEmpty
            pending = []
            pendingEntries = []
            readRequests = []
            let segment = segments[segments.count - 1]
            condition.unlock()

            if let first = entries.first {
                do {
                    // Entry by entry into the current segment, a new one started once it is full.
                    var from = 0
                    var current = segment
                    for (index, entry) in entries.enumerated()
                    where descriptor < 0 || (written + (entry.start - entries[from].start) >= segmentBytes && entry.start > current.start) {
                        if index > from {
                            try JournalFiles.write(Array(bytes[Int(entries[from].start - first.start) ..< Int(entry.start - first.start)]),
                                                   to: descriptor, path: current.path)
                            written += entry.start - entries[from].start
                            try JournalFiles.sync(descriptor, path: current.path)
                        }
                        descriptor = try openSegment(current: descriptor, startingAt: entry.start, written: &written)
                        current = locked { segments[segments.count - 1] }
                        from = index
                    }
                    try JournalFiles.write(Array(bytes[Int(entries[from].start - first.start)...]), to: descriptor, path: current.path)
                    try JournalFiles.sync(descriptor, path: current.path)
                    written += UInt64(bytes.count) - (entries[from].start - first.start)
                    madeDurable(entries)
                } catch {
                    logger.critical("cannot write the journal; retrying", metadata: ["error": "\(error)"])
                    requeue(bytes, entries)
                    usleep(1_000_000)
                }
            }
            for request in requests { serve(request) }
            if let cursorsToSave {
                save(cursorsToSave, trimmingTo: trimTo)
                savedAt = ContinuousClock.now
            }
            if finished {
                if descriptor >= 0 { Glibc.close(descriptor) }
                condition.lock()
                stopped = true
                condition.broadcast()
                condition.unlock()
                return
            }
        }
    }

    /// Opens the segment to append to: the last one at start, or a new one from `start` once the
    /// current one is full.
    private func openSegment(current: Int32, startingAt start: UInt64, written: inout UInt64) throws -> Int32 {
        if current < 0 {
            let last = locked { segments[segments.count - 1] }
            written = try JournalFiles.size(last.path)
            if written < segmentBytes { return try JournalFiles.openForAppending(last.path) }
        } else {
            Glibc.close(current)
        }
        let segment = JournalFiles.Segment(start: start, path: folder + "/" + JournalFiles.segmentName(start: start))
        let descriptor = try JournalFiles.openForAppending(segment.path)
        locked { segments.append(segment) }
        written = 0
        return descriptor
    }

    private func madeDurable(_ entries: [Entry]) {
        condition.lock()
        if let last = entries.last { durable = last.end }
        for entry in entries {
            cache.append(entry)
            cacheBytes += entry.end - entry.start
        }
        while cacheBytes > Self.cacheLimit, let first = cache.popFirst() { cacheBytes -= first.end - first.start }
        let answers = answerWaiters()
        condition.unlock()
        for (continuation, entries) in answers { continuation.resume(returning: entries) }
    }

    /// The waiting readers that can be answered now: from the cache, or empty-handed at the end of
    /// a journal that takes no more records; those the cache cannot answer become file reads.
    private func answerWaiters() -> [(CheckedContinuation<[Entry], Never>, [Entry])] {
        var answers: [(CheckedContinuation<[Entry], Never>, [Entry])] = []
        for (id, waiter) in waiters where !readRequests.contains(where: { $0.waiter == id }) {
            if waiter.cursor < durable {
                if let cached = cached(from: waiter.cursor, limit: waiter.limit) {
                    waiters[id] = nil
                    answers.append((waiter.continuation, cached))
                } else {
                    readRequests.append((waiter.cursor, waiter.limit, id))
                    condition.signal()
                }
            } else if !appending && waiter.cursor >= end {
                waiters[id] = nil
                answers.append((waiter.continuation, []))
            }
        }
        return answers
    }

    private func requeue(_ bytes: [UInt8], _ entries: [Entry]) {
        locked {
            pending = bytes + pending
            pendingEntries = entries + pendingEntries
        }
    }

    /// Answers a read that the cache could not: from the segment files.
    private func serve(_ request: (cursor: UInt64, limit: Int, waiter: UInt64)) {
        let (segments, durable) = locked { (self.segments, self.durable) }
        var entries: [Entry] = []
        var cursor = request.cursor
        do {
            while entries.count < request.limit, cursor < durable,
                  let segment = segments.last(where: { $0.start <= cursor }) {
                let next = segments.first(where: { $0.start > segment.start })?.start ?? durable
                let offset = cursor - segment.start
                var chunk = try JournalFiles.read(segment.path, from: offset, count: Int(min(min(next, durable) - cursor, 8 << 20)))
                var scan = JournalFrame.scan(chunk[...])
                if scan.frames.isEmpty, chunk.count >= JournalFrame.headerSize {
                    // A record larger than the chunk: read it whole.
                    let length = (0 ..< 4).reduce(0) { $0 | Int(chunk[$1]) << (8 * $1) }
                    chunk = try JournalFiles.read(segment.path, from: offset, count: JournalFrame.headerSize + min(length, JournalFrame.maximumBody))
                    scan = JournalFrame.scan(chunk[...])
                }
                for frame in scan.frames where entries.count < request.limit {
                    let start = cursor + UInt64(frame.offset)
                    let record = try JournalCodec.decode(frame.body)
                    entries.append(Entry(start: start, end: start + UInt64(JournalFrame.headerSize + frame.body.count), record: record))
                }
                guard let last = entries.last, last.end > cursor else { break }
                cursor = last.end
            }
        } catch {
            logger.critical("cannot read the journal", metadata: ["error": "\(error)", "from": "\(request.cursor)"])
        }
        let waiter = locked { waiters.removeValue(forKey: request.waiter) }
        waiter?.continuation.resume(returning: entries)
    }

    /// Saves the cursors and deletes the segments both consumers have passed.
    private func save(_ cursors: [Consumer: UInt64], trimmingTo trim: UInt64) {
        let text = Consumer.allCases.map { "\($0.rawValue) \(cursors[$0] ?? 0)" }.joined(separator: "\n") + "\n"
        do {
            try JournalFiles.replace(folder + "/cursors", with: text)
        } catch {
            logger.warning("cannot save the journal's cursors", metadata: ["error": "\(error)"])
        }
        let removable = locked { () -> [JournalFiles.Segment] in
            savedCursors = cursors
            var gone: [JournalFiles.Segment] = []
            while segments.count > 1, segments[1].start <= trim { gone.append(segments.removeFirst()) }
            while let first = cache.first, first.end <= trim {
                cacheBytes -= first.end - first.start
                cache.removeFirst()
            }
            return gone
        }
        for segment in removable {
            do { try JournalFiles.remove(segment.path) } catch { logger.warning("cannot delete a journal segment", metadata: ["error": "\(error)"]) }
        }
    }

    // MARK: Helpers (with `condition` locked, unless said otherwise)

    /// Records from `cursor` in the cache, or nil when it does not hold `cursor`.
    private func cached(from cursor: UInt64, limit: Int) -> [Entry]? {
        guard let first = cache.first, first.start <= cursor, cursor < durable else { return nil }
        var low = 0
        var high = cache.count
        while low < high {
            let middle = (low + high) / 2
            if cache[middle].start < cursor { low = middle + 1 } else { high = middle }
        }
        guard low < cache.count, cache[low].start == cursor else { return nil }
        return Array(cache[low ..< min(cache.count, low + limit)])
    }

    /// Runs `body` with `condition` locked (call without it).
    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    private static func merge(_ earlier: OutboundRecord.Progress?, _ later: OutboundRecord.Progress) -> OutboundRecord.Progress {
        guard let earlier else { return later }
        var lastSeen: [String: Int64] = [:]
        for seen in earlier.lastSeen + later.lastSeen { lastSeen[seen.user] = max(lastSeen[seen.user] ?? .min, seen.time) }
        return .init(clock: max(earlier.clock, later.clock), lastSeen: lastSeen.map { .init(user: $0.key, time: $0.value) }.sorted { $0.user < $1.user })
    }
}
