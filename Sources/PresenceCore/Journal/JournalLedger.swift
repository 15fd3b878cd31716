import DequeModule

/// The aggregator's journal without a disk: where records lie (positions in the journal's bytes),
/// which segment files hold them, what is queued to write and what is durable, how far each reader
/// has got, which recent records are cached, who waits for what, when the cursors are due to be
/// saved and which segments may go. `Journal` (the service) carries out the `Work` it hands out on
/// its own thread (writes and flushes, file reads, saves, deletions) and reports each back; every
/// decision is here, tested without a file.
///
/// A record is durable once written and flushed, and only then given to readers. It stays until
/// both readers have passed it; then whole segments go. Past `maximumBytes` held (a long database
/// outage), progress records are gathered and queued as one at most every `coalescingInterval`;
/// events are always queued. Records a reader has yet to pass are kept decoded in a cache, up to
/// `cacheBytes` of memory, so that readers that keep up never read the files.
public struct JournalLedger: Sendable {
    /// Sizes and intervals.
    public struct Configuration: Sendable, Equatable {
        /// A segment file is closed past this many bytes, and the next record starts a new one.
        public var segmentBytes: UInt64 = 64 << 20
        /// Past this many bytes held, progress is gathered (see the type's comment).
        public var maximumBytes: UInt64 = 1 << 30
        /// How often gathered progress is queued past `maximumBytes`, ms.
        public var coalescingInterval: Int64 = 60_000
        /// Durable records a reader has yet to pass, kept decoded for readers: at most this much
        /// memory (`OutboundRecord.memoryFootprint` and the entry), the oldest let go first.
        public var cacheBytes: UInt64 = 32 << 20
        /// Cursors are saved at most this often (after a crash, at most this much is read again), ms.
        public var cursorInterval: Int64 = 100

        public init() {}
    }

    /// Who reads the journal, by the name its saved cursor has.
    public enum Reader: String, Sendable, CaseIterable {
        case publisher = "published"
        case database = "applied"
    }

    /// A segment file: the position of its first byte and how many bytes it holds.
    public struct Segment: Sendable, Equatable {
        public var start: UInt64
        public var size: UInt64

        public init(start: UInt64, size: UInt64) {
            self.start = start
            self.size = size
        }
    }

    /// A record and where it lies: from `start` to `end` (exclusive).
    public struct Entry: Sendable, Equatable {
        public var start: UInt64
        public var end: UInt64
        public var record: OutboundRecord

        public init(start: UInt64, end: UInt64, record: OutboundRecord) {
            self.start = start
            self.end = end
            self.record = record
        }
    }

    /// A reader waiting for records, named by the service.
    public typealias Waiter = UInt64

    /// What the journal's thread must do next.
    public enum Work: Sendable, Equatable {
        /// Append these bytes and flush them, then report `wrote(_:)` (or `writeFailed(_:)`).
        case write(WriteBatch)
        /// Read durable records from the segment files for a waiter, then report `served(_:entries:)`.
        case read(ReadRequest)
        /// Save the cursors, then delete the segments that start at these positions; report `saved(_:)`.
        case save(CursorSave)
        /// Nothing to do until something is appended, read or consumed, or until this time (ms) at
        /// the latest (nil: no time).
        case wait(until: Int64?)
        /// Stopped: everything queued is written and the cursors are saved.
        case stop
    }

    /// Queued records, cut where they fall into segments.
    public struct WriteBatch: Sendable, Equatable {
        public var chunks: [Chunk]
        public var entries: [Entry]

        /// Bytes for one segment file: its start, how many bytes it held before (where a failed write
        /// is cut back to), and whether this chunk opens it (the one before is then full).
        public struct Chunk: Sendable, Equatable {
            public var segment: UInt64
            public var offset: UInt64
            public var opensSegment: Bool
            public var bytes: [UInt8]
        }
    }

    /// A read the cache cannot answer: up to `limit` records from `cursor`, which lies in one of
    /// `segments`, none past `durable`.
    public struct ReadRequest: Sendable, Equatable {
        public var waiter: Waiter
        public var cursor: UInt64
        public var limit: Int
        public var segments: [Segment]
        public var durable: UInt64
    }

    /// Cursors to save and the segments every reader has passed.
    public struct CursorSave: Sendable, Equatable {
        public var cursors: [Reader: UInt64]
        public var deleting: [UInt64]
    }

    /// Records for a waiter (none: the journal ends there, or the read was cut short).
    public struct Answer: Sendable, Equatable {
        public var waiter: Waiter
        public var entries: [Entry]

        public init(waiter: Waiter, entries: [Entry]) {
            self.waiter = waiter
            self.entries = entries
        }
    }

    /// What a read finds: records at once, or a wait (answered later through `Answer`s).
    public enum ReadOutcome: Sendable, Equatable {
        case records([Entry])
        case waiting
    }

    /// Where the journal is in its life.
    public enum Phase: Sendable, Equatable {
        /// Records are appended.
        case appending
        /// No more records: readers that reach the end get an empty answer.
        case finished
        /// The thread writes what is queued, saves the cursors and ends.
        case stopping
        case stopped
    }

    public let configuration: Configuration
    public private(set) var phase = Phase.appending
    /// The segments held, oldest first; records are appended to the last.
    public private(set) var segments: [Segment]
    /// After the last record appended (queued ones included).
    public private(set) var end: UInt64
    /// After the last record written and flushed.
    public private(set) var durable: UInt64
    /// How far each reader is done.
    public private(set) var cursors: [Reader: UInt64]
    private var savedCursors: [Reader: UInt64]
    private var savedAt: Int64 = .min
    private var queuedBytes: [UInt8] = []
    private var queuedEntries: [Entry] = []
    private var writing = false
    private var cache = Deque<Entry>()
    /// The memory the cache holds (`cacheBytes`).
    public private(set) var cachedBytes: UInt64 = 0
    private var waiters: [Waiter: (cursor: UInt64, limit: Int)] = [:]
    /// Waiters whose records must come from the files, in order, and the one being read.
    private var fileReads: [Waiter] = []
    private var gathered: OutboundRecord.Progress?
    private var gatheredAt: Int64 = .min

    /// A ledger of the segments found on disk (oldest first; none for a new journal), the last one
    /// holding `lastSegmentBytes` (from which a torn tail is cut: `recovered`), with the cursors last
    /// saved. Cursors are kept within what is held.
    public init(configuration: Configuration = Configuration(), segments found: [Segment], lastSegmentBytes: ArraySlice<UInt8>,
                savedCursors: [Reader: UInt64]) {
        self.configuration = configuration
        var segments = found
        if segments.isEmpty { segments = [Segment(start: savedCursors.values.max() ?? 0, size: 0)] }
        let kept = JournalFrame.scan(lastSegmentBytes).end
        segments[segments.count - 1].size = UInt64(kept)
        self.segments = segments
        end = segments[segments.count - 1].start + UInt64(kept)
        durable = end
        let first = segments[0].start
        var cursors: [Reader: UInt64] = [:]
        for reader in Reader.allCases { cursors[reader] = min(max(savedCursors[reader] ?? first, first), end) }
        self.cursors = cursors
        self.savedCursors = cursors
    }

    /// The bytes a crash tore from the end of the last segment: what `init` cut, which the service
    /// truncates before writing.
    public static func tornBytes(of lastSegmentBytes: ArraySlice<UInt8>) -> Int {
        lastSegmentBytes.count - JournalFrame.scan(lastSegmentBytes).end
    }

    /// The oldest position held.
    public var start: UInt64 { segments[0].start }

    /// Bytes held, from the oldest segment to the end.
    public var heldBytes: UInt64 { end - start }

    // MARK: Appending

    /// Queues `record` (framed) at `now` (ms, any monotonic clock); past `maximumBytes` held,
    /// progress is gathered instead. Nothing is queued once appending finished, nor a record too
    /// large to frame (false: the caller says so).
    @discardableResult
    public mutating func append(_ record: OutboundRecord, at now: Int64) -> Bool {
        guard phase == .appending else { return true }
        if case .progress(let progress) = record, heldBytes > configuration.maximumBytes {
            gathered = Self.merge(gathered, progress)
            guard gatheredAt == .min || TimeBounds.difference(now, gatheredAt) >= configuration.coalescingInterval, let merged = gathered else {
                return true
            }
            gathered = nil
            gatheredAt = now
            return queue(.progress(merged))
        }
        return queue(record)
    }

    /// No more records: gathered progress is queued, and readers at the end are answered empty.
    public mutating func finishAppending() -> [Answer] {
        guard phase == .appending else { return [] }
        if let merged = gathered {
            gathered = nil
            queue(.progress(merged))
        }
        phase = .finished
        return answerWaiters()
    }

    /// The thread is to end once what is queued is written and the cursors saved; readers still
    /// waiting are answered empty.
    public mutating func stop() -> [Answer] {
        var answers = finishAppending()
        guard phase != .stopped else { return answers }
        phase = .stopping
        for waiter in waiters.keys.sorted() where !answers.contains(where: { $0.waiter == waiter }) {
            answers.append(Answer(waiter: waiter, entries: []))
        }
        waiters = [:]
        fileReads = []
        return answers
    }

    @discardableResult
    private mutating func queue(_ record: OutboundRecord) -> Bool {
        let body = JournalCodec.encode(record)
        guard body.count <= JournalFrame.maximumBody else { return false }
        let frame = JournalFrame.frame(body)
        let entry = Entry(start: end, end: end + UInt64(frame.count), record: record)
        queuedBytes += frame
        queuedEntries.append(entry)
        end = entry.end
        return true
    }

    // MARK: Reading

    /// Up to `limit` durable records from `cursor` (the end of the last one read; one from before
    /// what is held starts at the oldest record held) for `waiter`: from the cache at once, empty
    /// at the end once appending finished, or later (an `Answer`), when they are written or read
    /// from the files.
    public mutating func read(from cursor: UInt64, limit: Int, for waiter: Waiter) -> ReadOutcome {
        let cursor = max(cursor, start)
        if phase == .stopping || phase == .stopped { return .records([]) }
        if cursor < durable, let cached = cached(from: cursor, limit: limit) { return .records(cached) }
        if cursor >= end && phase == .finished { return .records([]) }
        waiters[waiter] = (cursor, max(1, limit))
        if cursor < durable { fileReads.append(waiter) }
        return .waiting
    }

    /// The waiter gave up (its task was cancelled): true when it was waiting, so that the service
    /// answers it.
    public mutating func cancel(_ waiter: Waiter) -> Bool {
        fileReads.removeAll { $0 == waiter }
        return waiters.removeValue(forKey: waiter) != nil
    }

    /// `reader` is done with everything before `cursor` (never past what is durable); what every
    /// reader is done with leaves the cache (a reader that goes back, such as the database writer
    /// after a standby was promoted behind, reads it from the files).
    public mutating func consumed(_ reader: Reader, upTo cursor: UInt64) {
        if cursor > cursors[reader] ?? 0 { cursors[reader] = min(cursor, durable) }
        let passed = cursors.values.min() ?? 0
        while let first = cache.first, first.end <= passed { uncache() }
    }

    // MARK: The thread's work

    /// The next thing for the thread to do at `now` (ms, monotonic): write what is queued, serve a
    /// file read, save cursors that moved (at most every `cursorInterval`, and at the stop), or wait.
    public mutating func nextWork(at now: Int64) -> Work {
        if !queuedEntries.isEmpty && !writing { return .write(takeBatch()) }
        if let waiter = fileReads.first, let wanted = waiters[waiter] {
            fileReads.removeFirst()
            return .read(ReadRequest(waiter: waiter, cursor: wanted.cursor, limit: wanted.limit, segments: segments, durable: durable))
        }
        let stopping = phase == .stopping
        if cursors != savedCursors {
            let due = savedAt == .min ? now : TimeBounds.sum(savedAt, configuration.cursorInterval)
            if now >= due || stopping { return .save(CursorSave(cursors: cursors, deleting: passedSegments())) }
            return .wait(until: due)
        }
        if stopping && queuedEntries.isEmpty && !writing {
            phase = .stopped
            return .stop
        }
        if phase == .stopped { return .stop }
        return .wait(until: nil)
    }

    /// The batch was written and flushed: its records are durable and cached, and the waiters they
    /// answer are answered.
    public mutating func wrote(_ batch: WriteBatch) -> [Answer] {
        writing = false
        for chunk in batch.chunks {
            if chunk.opensSegment { segments.append(Segment(start: chunk.segment, size: 0)) }
            if let index = segments.lastIndex(where: { $0.start == chunk.segment }) { segments[index].size += UInt64(chunk.bytes.count) }
        }
        if let last = batch.entries.last { durable = last.end }
        for entry in batch.entries {
            cache.append(entry)
            cachedBytes += Self.memory(of: entry)
        }
        while cachedBytes > configuration.cacheBytes, !cache.isEmpty { uncache() }
        return answerWaiters()
    }

    /// Writing the batch failed (the service cut the files back to each chunk's offset): it is
    /// queued again, ahead of what came since.
    public mutating func writeFailed(_ batch: WriteBatch) {
        writing = false
        queuedBytes = batch.chunks.flatMap(\.bytes) + queuedBytes
        queuedEntries = batch.entries + queuedEntries
    }

    /// The records a file read found for `waiter` (none when the files could not be read).
    public mutating func served(_ waiter: Waiter, entries: [Entry]) -> Answer? {
        guard waiters.removeValue(forKey: waiter) != nil else { return nil }
        return Answer(waiter: waiter, entries: entries)
    }

    /// The cursors were saved: the passed segments are let go (their files are deleted next).
    public mutating func saved(_ save: CursorSave, at now: Int64) {
        savedCursors = save.cursors
        savedAt = now
        segments.removeAll { save.deleting.contains($0.start) }
    }

    /// Saving failed: tried again after `cursorInterval`; when stopping, given up (the next start
    /// reads some records again, which readers take again without harm).
    public mutating func saveFailed(at now: Int64) {
        savedAt = now
        if phase == .stopping { savedCursors = cursors }
    }

    /// Cuts the queued records into chunks, one per segment: into the last segment until it holds
    /// `segmentBytes`, then a new one from the next record's start.
    private mutating func takeBatch() -> WriteBatch {
        let entries = queuedEntries
        let bytes = queuedBytes
        queuedEntries = []
        queuedBytes = []
        writing = true
        var chunks: [WriteBatch.Chunk] = []
        var segment = segments[segments.count - 1]
        var chunkStart = 0
        var opens = false
        let base = entries[0].start
        for entry in entries {
            let offset = Int(entry.start - base)
            if segment.size + UInt64(offset - chunkStart) >= configuration.segmentBytes, entry.start > segment.start {
                if offset > chunkStart {
                    chunks.append(.init(segment: segment.start, offset: segment.size, opensSegment: opens, bytes: Array(bytes[chunkStart ..< offset])))
                }
                segment = Segment(start: entry.start, size: 0)
                chunkStart = offset
                opens = true
            }
        }
        chunks.append(.init(segment: segment.start, offset: segment.size, opensSegment: opens, bytes: Array(bytes[chunkStart...])))
        return WriteBatch(chunks: chunks, entries: entries)
    }

    /// The starts of the segments wholly before every reader's cursor (the last one always stays).
    private func passedSegments() -> [UInt64] {
        let slowest = cursors.values.min() ?? 0
        var passed: [UInt64] = []
        for index in segments.indices.dropLast() where segments[index + 1].start <= slowest { passed.append(segments[index].start) }
        return passed
    }

    /// The waiters that can be answered now: from the cache, or empty-handed at the end of a
    /// finished journal; those the cache cannot answer become file reads.
    private mutating func answerWaiters() -> [Answer] {
        var answers: [Answer] = []
        for (waiter, wanted) in waiters.sorted(by: { $0.key < $1.key }) where !fileReads.contains(waiter) {
            if wanted.cursor < durable {
                if let cached = cached(from: wanted.cursor, limit: wanted.limit) {
                    waiters[waiter] = nil
                    answers.append(Answer(waiter: waiter, entries: cached))
                } else {
                    fileReads.append(waiter)
                }
            } else if phase != .appending && wanted.cursor >= end {
                waiters[waiter] = nil
                answers.append(Answer(waiter: waiter, entries: []))
            }
        }
        return answers
    }

    /// The memory an entry holds in the cache: its slot and its record's footprint.
    private static func memory(of entry: Entry) -> UInt64 {
        UInt64(MemoryLayout<Entry>.stride) + entry.record.memoryFootprint
    }

    /// Lets the oldest cached record go.
    private mutating func uncache() {
        guard let first = cache.popFirst() else { return }
        cachedBytes -= min(cachedBytes, Self.memory(of: first))
    }

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
        return Array(cache[low ..< min(cache.count, low + max(1, limit))])
    }

    private static func merge(_ earlier: OutboundRecord.Progress?, _ later: OutboundRecord.Progress) -> OutboundRecord.Progress {
        guard let earlier else { return later }
        var lastSeen: [String: Int64] = [:]
        for seen in earlier.lastSeen + later.lastSeen { lastSeen[seen.user] = max(lastSeen[seen.user] ?? .min, seen.time) }
        return .init(clock: max(earlier.clock, later.clock), lastSeen: lastSeen.map { .init(user: $0.key, time: $0.value) }.sorted { $0.user < $1.user })
    }
}

extension JournalLedger {
    /// The records of a read request, from the segment files through `read` (a segment's start,
    /// an offset in it and a byte count; fewer bytes at the file's end): at most 8 MiB at a time,
    /// a record larger than that read whole, each decoded with `topics` (`JournalCodec`). Throws when
    /// a file cannot be read or a record decoded.
    public static func collect(_ request: ReadRequest, topics: Topics, read: (_ segment: UInt64, _ offset: UInt64, _ count: Int) throws -> [UInt8]) throws -> [Entry] {
        var entries: [Entry] = []
        var cursor = request.cursor
        while entries.count < request.limit, cursor < request.durable,
              let segment = request.segments.last(where: { $0.start <= cursor }) {
            let next = request.segments.first(where: { $0.start > segment.start })?.start ?? request.durable
            let offset = cursor - segment.start
            var chunk = try read(segment.start, offset, Int(min(min(next, request.durable) - cursor, 8 << 20)))
            var scan = JournalFrame.scan(chunk[...])
            if scan.frames.isEmpty, chunk.count >= JournalFrame.headerSize {
                let length = (0 ..< 4).reduce(0) { $0 | Int(chunk[$1]) << (8 * $1) }
                chunk = try read(segment.start, offset, JournalFrame.headerSize + min(length, JournalFrame.maximumBody))
                scan = JournalFrame.scan(chunk[...])
            }
            for frame in scan.frames where entries.count < request.limit {
                let start = cursor + UInt64(frame.offset)
                let record = try JournalCodec.decode(frame.body, topics: topics)
                entries.append(Entry(start: start, end: start + UInt64(JournalFrame.headerSize + frame.body.count), record: record))
            }
            guard let last = entries.last, last.end > cursor else { break }
            cursor = last.end
        }
        return entries
    }
}
