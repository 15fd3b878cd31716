import PresenceCore
import Testing

/// The journal's decisions without a disk: segment files are byte arrays here, and each test
/// carries out the ledger's work as the journal's thread would, checking what it asks for.
@Suite struct JournalLedgerTests {
    typealias Ledger = JournalLedger

    static func record(_ index: Int) -> OutboundRecord {
        .erased(users: ["user-\(index)"])
    }

    /// A record of `count` users' retained states, each with a payload of 200 bytes, as the ranging
    /// readout refreshes them.
    static func states(_ index: Int, count: Int) -> OutboundRecord {
        .decided(.init(messages: (0 ..< count).map { user in
            OutboundMessage(topic: "venue/v1/state/users/user-\(index)-\(user)", payload: Array(repeating: UInt8(ascii: "x"), count: 200), retain: true)
        }, decidedAt: Int64(index)))
    }

    /// Segment files in memory, and the ledger's work carried out on them.
    struct Disk {
        var files: [UInt64: [UInt8]] = [:]
        var answers: [Ledger.Answer] = []

        /// Does the ledger's work until it waits (or stops); returns the last `Work` it was given.
        @discardableResult
        mutating func settle(_ ledger: inout Ledger, at now: Int64) throws -> Ledger.Work {
            while true {
                let work = ledger.nextWork(at: now)
                switch work {
                case .write(let batch):
                    for chunk in batch.chunks {
                        #expect(!chunk.opensSegment || files[chunk.segment] == nil, "a chunk opens a segment that exists")
                        #expect(UInt64(files[chunk.segment, default: []].count) == chunk.offset, "a chunk does not start at its segment's end")
                        files[chunk.segment, default: []] += chunk.bytes
                    }
                    answers += ledger.wrote(batch)
                case .read(let request):
                    let entries = try Ledger.collect(request, topics: .standard) { segment, offset, count in
                        let file = files[segment] ?? []
                        let from = min(file.count, Int(offset))
                        return Array(file[from ..< min(file.count, from + count)])
                    }
                    if let answer = ledger.served(request.waiter, entries: entries) { answers.append(answer) }
                case .save(let save):
                    for start in save.deleting { files[start] = nil }
                    ledger.saved(save, at: now)
                case .wait, .stop:
                    return work
                }
            }
        }
    }

    @Test func aTornTailIsCutAndWhatCameBeforeIsReadBackFromTheFiles() throws {
        var bytes: [UInt8] = []
        for index in 0 ..< 3 { bytes += JournalFrame.frame(JournalCodec.encode(Self.record(index))) }
        let whole = bytes.count
        bytes += JournalFrame.frame(JournalCodec.encode(Self.record(3))).prefix(7)
        #expect(Ledger.tornBytes(of: bytes[...]) == 7)
        var ledger = Ledger(segments: [.init(start: 0, size: UInt64(bytes.count))], lastSegmentBytes: bytes[...], savedCursors: [:])
        #expect(ledger.end == UInt64(whole) && ledger.durable == UInt64(whole), "the torn record was kept")
        var disk = Disk(files: [0: Array(bytes.prefix(whole))])

        // Nothing is cached after a start: a reader's records come from the files.
        #expect(ledger.read(from: 0, limit: 10, for: 1) == .waiting)
        guard case .wait = try disk.settle(&ledger, at: 0) else { Issue.record("the ledger did not settle"); return }
        #expect(disk.answers.map(\.waiter) == [1])
        #expect(disk.answers.first?.entries.map(\.record) == (0 ..< 3).map(Self.record))

        // The next record goes where the torn one began.
        ledger.append(Self.record(4), at: 0)
        try disk.settle(&ledger, at: 0)
        let reread = try JournalFrame.scan(disk.files[0, default: []][...]).frames.map { try JournalCodec.decode($0.body, topics: .standard) }
        #expect(reread == [0, 1, 2, 4].map(Self.record))
    }

    @Test func aFullSegmentIsClosedAndTheNextRecordStartsANewOne() throws {
        var configuration = Ledger.Configuration()
        configuration.segmentBytes = 40
        var ledger = Ledger(configuration: configuration, segments: [], lastSegmentBytes: [], savedCursors: [:])
        var disk = Disk()
        var starts: [UInt64] = []
        for index in 0 ..< 12 {
            starts.append(ledger.end)
            ledger.append(Self.record(index), at: 0)
        }
        try disk.settle(&ledger, at: 0)
        let segments = ledger.segments
        #expect(segments.count >= 4, "\(segments.count) segments for 12 records of about 17 bytes in 40-byte segments")
        for (segment, next) in zip(segments, segments.dropFirst()) {
            #expect(segment.size >= configuration.segmentBytes, "a segment was closed before it was full")
            #expect(segment.start + segment.size == next.start, "segments do not follow each other")
        }
        #expect(segments.allSatisfy { starts.contains($0.start) }, "a record was split across two segments")
        #expect(segments.map { UInt64(disk.files[$0.start]?.count ?? -1) } == segments.map(\.size))
        // Every record reads back across the segments.
        #expect(ledger.read(from: 0, limit: 100, for: 1) == .records((0 ..< 12).map { index in
            Ledger.Entry(start: starts[index], end: index + 1 < starts.count ? starts[index + 1] : ledger.end, record: Self.record(index))
        }), "the cache should answer a reader at the start")
    }

    @Test func aSlowReaderKeepsItsSegmentsAndIsServedFromTheFilesOnceTheCacheDroppedThem() throws {
        var configuration = Ledger.Configuration()
        configuration.segmentBytes = 100
        configuration.cacheBytes = 150
        configuration.cursorInterval = 100
        var ledger = Ledger(configuration: configuration, segments: [], lastSegmentBytes: [], savedCursors: [:])
        var disk = Disk()
        for index in 0 ..< 20 { ledger.append(Self.record(index), at: 0) }
        try disk.settle(&ledger, at: 0)
        let held = ledger.segments.count
        // The publisher keeps up; the database writer has read nothing.
        ledger.consumed(.publisher, upTo: ledger.end)
        #expect(try disk.settle(&ledger, at: 0) == .wait(until: nil), "cursors are saved at once the first time")
        #expect(ledger.segments.count == held, "a segment went before the slow reader passed it")

        // Its records fell out of the cache: they are read from the files, in order.
        #expect(ledger.read(from: 0, limit: 5, for: 7) == .waiting)
        try disk.settle(&ledger, at: 10)
        #expect(disk.answers.last?.waiter == 7 && disk.answers.last?.entries.map(\.record) == (0 ..< 5).map(Self.record))

        // Once it passes some segments, they go, but not before the cursor interval.
        let passed = ledger.segments[2].start
        ledger.consumed(.database, upTo: passed)
        #expect(try disk.settle(&ledger, at: 50) == .wait(until: 100))
        try disk.settle(&ledger, at: 100)
        #expect(ledger.segments.count == held - 2 && disk.files.count == held - 2)
        #expect(ledger.start == passed, "the segment the slow reader is in went, or one it passed stayed")
        // A cursor from before what is held starts at the oldest record held.
        var first: UInt64?
        if case .records(let entries) = ledger.read(from: 0, limit: 1, for: 8) {
            first = entries.first?.start
        } else {
            try disk.settle(&ledger, at: 100)
            first = disk.answers.last?.entries.first?.start
        }
        #expect(first == ledger.start)
    }

    @Test func theCacheHoldsNoMoreMemoryThanItsBoundNorWhatEveryReaderPassed() throws {
        // An array's capacity is what malloc gave it, which depends on the heap: each record's
        // own footprint is counted, not one record's times five.
        let records = (0 ..< 20).map { Self.states($0, count: 20) }
        let frame = UInt64(JournalFrame.frame(JournalCodec.encode(records[0])).count)
        #expect(records[0].memoryFootprint > 2 * frame, "decoded, a record holds more than twice its frame: a bound on frames would hold that much more")
        func memory(_ range: Range<Int>) -> UInt64 {
            range.reduce(0) { $0 + records[$1].memoryFootprint + UInt64(MemoryLayout<Ledger.Entry>.stride) }
        }
        var configuration = Ledger.Configuration()
        configuration.cacheBytes = memory(15 ..< 20)
        var ledger = Ledger(configuration: configuration, segments: [], lastSegmentBytes: [], savedCursors: [:])
        var disk = Disk()
        var starts: [UInt64] = []
        for record in records {
            starts.append(ledger.end)
            ledger.append(record, at: 0)
        }
        try disk.settle(&ledger, at: 0)
        #expect(ledger.cachedBytes == memory(15 ..< 20), "the cache holds \(ledger.cachedBytes) bytes under a bound of \(configuration.cacheBytes)")

        // The last five records are cached; the one before them is read from the files.
        #expect(ledger.read(from: starts[15], limit: 10, for: 1) == .records((15 ..< 20).map { index in
            Ledger.Entry(start: starts[index], end: index < 19 ? starts[index + 1] : ledger.end, record: records[index])
        }))
        #expect(ledger.read(from: starts[14], limit: 1, for: 2) == .waiting)
        try disk.settle(&ledger, at: 0)
        #expect(disk.answers.last?.waiter == 2 && disk.answers.last?.entries.map(\.record) == [records[14]])

        // What one reader passed stays while the other has yet to; what both passed goes.
        ledger.consumed(.publisher, upTo: ledger.end)
        #expect(ledger.cachedBytes == memory(15 ..< 20))
        ledger.consumed(.database, upTo: starts[17])
        #expect(ledger.cachedBytes == memory(17 ..< 20))
        #expect(ledger.read(from: starts[17], limit: 1, for: 3) == .records([Ledger.Entry(start: starts[17], end: starts[18], record: records[17])]))
        ledger.consumed(.database, upTo: ledger.end)
        #expect(ledger.cachedBytes == 0)
        // A reader that goes back finds its records in the files.
        #expect(ledger.read(from: starts[19], limit: 1, for: 4) == .waiting)
        try disk.settle(&ledger, at: 0)
        #expect(disk.answers.last?.waiter == 4 && disk.answers.last?.entries.map(\.record) == [records[19]])
    }

    @Test func aRecordsFootprintCountsItsBuffersByCapacityAndTheStringsNotStoredInline() {
        #expect(MemoryFootprint.string("u-1") == 0, "a string of up to 15 bytes is stored inline")
        #expect(MemoryFootprint.string(String(repeating: "a", count: 16)) == 64, "32 bytes of header, 17 of text, rounded to 16")
        #expect(MemoryFootprint.array([UInt8]()) == 0)
        let message = OutboundMessage(topic: "venue/v1/state/users/someone-with-a-long-key", payload: Array(repeating: 0, count: 200), retain: true)
        var messages = [message]
        let one = OutboundRecord.decided(.init(messages: messages, decidedAt: 0)).memoryFootprint
        #expect(one == MemoryFootprint.array(messages) + MemoryFootprint.buffer(45) + MemoryFootprint.buffer(message.payload.capacity), "the payload by its capacity (200 bytes or more, as malloc gave)")
        messages.reserveCapacity(100)
        let roomy = OutboundRecord.decided(.init(messages: messages, decidedAt: 0)).memoryFootprint
        #expect(roomy >= one + UInt64(99 * MemoryLayout<OutboundMessage>.stride), "room reserved in an array is memory held")
        let seen = OutboundRecord.progress(.init(clock: 0, lastSeen: (0 ..< 1_000).map { .init(user: "user-with-a-long-key-\($0)", time: 0) }))
        #expect(seen.memoryFootprint >= 1_000 * UInt64(MemoryLayout<OutboundRecord.LastSeen>.stride + 48))
    }

    @Test func aReaderAtTheEndIsAnsweredByTheNextWriteAndEmptyAtTheFinish() throws {
        var ledger = Ledger(segments: [], lastSegmentBytes: [], savedCursors: [:])
        var disk = Disk()
        #expect(ledger.read(from: 0, limit: 10, for: 1) == .waiting)
        #expect(try disk.settle(&ledger, at: 0) == .wait(until: nil))
        ledger.append(Self.record(1), at: 0)
        try disk.settle(&ledger, at: 0)
        #expect(disk.answers == [Ledger.Answer(waiter: 1, entries: [Ledger.Entry(start: 0, end: ledger.end, record: Self.record(1))])])
        #expect(ledger.read(from: ledger.end, limit: 10, for: 2) == .waiting)
        #expect(ledger.finishAppending() == [Ledger.Answer(waiter: 2, entries: [])])
        #expect(ledger.read(from: ledger.end, limit: 10, for: 3) == .records([]))
        ledger.append(Self.record(2), at: 0)
        #expect(ledger.end == disk.files[0].map { UInt64($0.count) }, "a record was taken after the finish")
        ledger.consumed(.publisher, upTo: ledger.end)
        _ = ledger.stop()
        guard case .save = ledger.nextWork(at: 0) else { Issue.record("the cursors were not saved at the stop"); return }
        try disk.settle(&ledger, at: 0)
        #expect(ledger.phase == .stopped)
    }

    @Test func pastItsBoundProgressIsGatheredButEveryOtherRecordIsQueued() throws {
        var configuration = Ledger.Configuration()
        configuration.maximumBytes = 200
        configuration.coalescingInterval = 60_000
        var ledger = Ledger(configuration: configuration, segments: [], lastSegmentBytes: [], savedCursors: [:])
        var disk = Disk()
        for index in 0 ..< 20 { ledger.append(Self.record(index), at: 0) }
        for second in 0 ..< 30 {
            ledger.append(.progress(.init(clock: Int64(second), lastSeen: [.init(user: "u\(second % 3)", time: Int64(second))])), at: Int64(second) * 1000)
        }
        ledger.append(Self.record(20), at: 30_000)
        _ = ledger.finishAppending()
        try disk.settle(&ledger, at: 30_000)
        guard case .records(let entries) = ledger.read(from: 0, limit: 1_000, for: 1) else { Issue.record("not cached"); return }
        let progress = entries.compactMap { entry -> OutboundRecord.Progress? in
            if case .progress(let progress) = entry.record { progress } else { nil }
        }
        #expect(entries.filter { if case .erased = $0.record { true } else { false } }.map(\.record) == (0 ... 20).map(Self.record))
        #expect(progress.count == 2, "\(progress.count) progress records past the bound")
        #expect(progress.last?.clock == 29 && progress.last?.lastSeen.map(\.time) == [27, 28, 29])
    }
}
