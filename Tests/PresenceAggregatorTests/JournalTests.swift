import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import PresenceCore
import Testing
@testable import PresenceAggregator

/// The journal service on a real file system: records made durable and read back in order across
/// segments and restarts, a torn tail cut, segments deleted once both readers passed them, one
/// aggregator per folder, and a journal of another database moved aside. (Its decisions alone are
/// `JournalLedgerTests`.)
@Suite struct JournalTests {
    static let logger = Logger(label: "journal-tests") { _ in SwiftLogNoOpLogHandler() }

    static func folder() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)").path
    }

    static func record(_ index: Int) -> OutboundRecord {
        let event = PresenceEvent(kind: .enter, id: "00000000-0000-0000-0000-\(String(format: "%012d", index))", user: "user-\(index)",
                                  device: "mac:00:11:22:33:44:55", beacon: "booth-\(index % 7)", venue: "expo", at: Int64(index), rssi: -60,
                                  distance: 1, proximity: .near)
        return .decided(.init(messages: [OutboundMessage(event, .standard)], decidedAt: Int64(index)))
    }

    static let binding = JournalBinding(database: "00000000-0000-0000-0000-00000000d001", topicPrefix: "presence")

    /// `journal`, opened for `binding` and running as a service until `close(_:)`.
    static func opened(_ journal: Journal, binding: JournalBinding = binding) throws -> Journal {
        try journal.open(for: binding, storedJournal: nil)
        let group = ServiceGroup(services: [journal], logger: logger)
        running.withLock { $0[ObjectIdentifier(journal)] = (group, Task { try? await group.run() }) }
        return journal
    }

    /// `opened`, for a folder whose journal was just closed. The tests of this process run side by
    /// side with tests that spawn programs, and a spawned child holds a copy of every descriptor
    /// (the closed journal's lock among them: a `flock` belongs to the open file, not to the
    /// process) from its fork until its exec closes them. So a lock found held is tried again, for
    /// up to 5 s; any other error, or a lock still held then, is thrown.
    static func reopened(_ make: () -> Journal, binding: JournalBinding = binding) async throws -> Journal {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            do {
                return try opened(make(), binding: binding)
            } catch let error as AggregatorError where error.description.hasPrefix("another aggregator uses the journal") && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Stops a journal `opened` started: what is queued is written and its lock released.
    static func close(_ journal: Journal) async {
        guard let (group, task) = running.withLock({ $0.removeValue(forKey: ObjectIdentifier(journal)) }) else { return }
        await group.triggerGracefulShutdown()
        await task.value
    }

    static let running = Mutex<[ObjectIdentifier: (ServiceGroup, Task<Void, Never>)]>([:])

    /// Polls `condition` every 20 ms until it holds or `timeout` passes; returns whether it held.
    static func eventually(timeout: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    /// `count` records from `cursor`, waiting for them to be made durable.
    static func read(_ count: Int, _ journal: Journal, from cursor: UInt64) async -> [Journal.Entry] {
        var entries: [Journal.Entry] = []
        var cursor = cursor
        while entries.count < count {
            let more = await journal.records(from: cursor, limit: count - entries.count)
            guard let last = more.last else { break }
            entries += more
            cursor = last.end
        }
        return entries
    }

    @Test func recordsComeBackInOrderAcrossSegmentsAndRestartsAndATornTailIsCut() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var journal = try Self.opened(Journal(directory: folder, segmentBytes: 2_000, logger: Self.logger))
        for index in 0 ..< 300 {
            journal.append(Self.record(index))
            if index % 50 == 0 { try await Task.sleep(for: .milliseconds(20)) }
        }
        journal.finishAppending()
        let written = await Self.read(300, journal, from: journal.start)
        #expect(written.map(\.record) == (0 ..< 300).map(Self.record), "records lost or out of order")
        #expect(await journal.records(from: written.last?.end ?? 0, limit: 1).isEmpty, "no end once appending finished")
        #expect(zip(written, written.dropFirst()).allSatisfy { $0.end == $1.start })
        let end = journal.status.end
        journal.consumed(.publisher, upTo: written[99].end)
        await Self.close(journal)
        #expect(try JournalFiles.segments(in: folder).count > 10, "the journal did not rotate its segments")
        // A crash tore the last write: the tail is cut, nothing before it is lost.
        let last = try #require(JournalFiles.segments(in: folder).last)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: last.path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0xFF, 0x01, 0x00, 0x00, 0x12, 0x34]))
        try handle.close()

        journal = try await Self.reopened { Journal(directory: folder, segmentBytes: 2_000, logger: Self.logger) }
        #expect(journal.status.end == end)
        #expect(journal.cursor(of: .publisher) == written[99].end && journal.cursor(of: .database) == 0)
        #expect(await Self.read(200, journal, from: written[99].end).map(\.record) == (100 ..< 300).map(Self.record), "records lost after the restart")
        // Reading from disk (the cache is empty after a restart) and from the middle of a segment.
        #expect(await journal.records(from: written[150].start, limit: 3).map(\.record) == (150 ..< 153).map(Self.record), "reading from the middle")
        journal.append(Self.record(300))
        journal.finishAppending()
        #expect(await Self.read(1, journal, from: end).map(\.record) == [Self.record(300)], "the record after the restart")
        await Self.close(journal)
    }

    @Test func segmentsGoOnceBothReadersPassedThem() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let journal = try Self.opened(Journal(directory: folder, segmentBytes: 1_000, logger: Self.logger))
        for index in 0 ..< 100 {
            journal.append(Self.record(index))
            try await Task.sleep(for: .milliseconds(2))
        }
        let entries = await Self.read(100, journal, from: 0)
        let before = try JournalFiles.segments(in: folder).count
        journal.consumed(.publisher, upTo: entries[80].end)
        try await Task.sleep(for: .milliseconds(200))
        #expect(try JournalFiles.segments(in: folder).count == before, "a segment went before the database writer passed it")
        journal.consumed(.database, upTo: entries[60].end)
        // Passed segments go one by one: wait until every segment wholly before the slower
        // cursor is gone (the first one held then contains it), so the checks below see a
        // settled folder.
        #expect(await Self.eventually(timeout: .seconds(5)) {
            guard let segments = try? JournalFiles.segments(in: folder), segments.count < before else { return false }
            return segments.count < 2 || segments[1].start > entries[60].end
        })
        let kept = try JournalFiles.segments(in: folder)
        #expect(kept.count < before && (kept.first?.start ?? .max) <= entries[60].end)
        #expect(await journal.records(from: 0, limit: 1).first.map { $0.start } == kept.first?.start, "an old cursor starts at the oldest record held")
        await Self.close(journal)
    }

    @Test func aReaderWaitsForTheNextRecordAndHearsTheEnd() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let journal = try Self.opened(Journal(directory: folder, logger: Self.logger))
        let reader = Task { await journal.records(from: 0, limit: 10) }
        try await Task.sleep(for: .milliseconds(100))
        journal.append(Self.record(1))
        #expect(await reader.value.map(\.record) == [Self.record(1)])
        let end = journal.status.end
        let waiting = Task { await journal.records(from: end, limit: 10) }
        try await Task.sleep(for: .milliseconds(100))
        journal.finishAppending()
        #expect(await waiting.value.isEmpty)
        let cancelled = Task { await journal.records(from: end + 10_000, limit: 10) }
        cancelled.cancel()
        #expect(await cancelled.value.isEmpty)
        #expect(throws: AggregatorError.self) { _ = try Self.opened(Journal(directory: folder, logger: Self.logger)) }
        await Self.close(journal)
    }

    @Test func aJournalOfAnotherDatabaseOrPrefixIsMovedAsideAndTheSameOneCarriesOn() async throws {
        let folder = Self.folder()
        defer {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: (folder as NSString).deletingLastPathComponent)) ?? []
            where name.hasPrefix((folder as NSString).lastPathComponent) {
                try? FileManager.default.removeItem(atPath: (folder as NSString).deletingLastPathComponent + "/" + name)
            }
        }
        var journal = try Self.opened(Journal(directory: folder, logger: Self.logger))
        journal.append(Self.record(1))
        journal.finishAppending()
        _ = await Self.read(1, journal, from: 0)
        let identity = journal.identity
        await Self.close(journal)

        // The same database and prefix: the journal carries on, its record still there.
        journal = try await Self.reopened { Journal(directory: folder, logger: Self.logger) }
        #expect(journal.identity == identity && journal.status.end > 0)
        await Self.close(journal)

        for other in [JournalBinding(database: "00000000-0000-0000-0000-00000000d002", topicPrefix: "presence"),
                      JournalBinding(database: Self.binding.database, topicPrefix: "venue-2")] {
            journal = try await Self.reopened { Journal(directory: folder, logger: Self.logger) }
            await Self.close(journal)
            journal = try await Self.reopened({ Journal(directory: folder, logger: Self.logger) }, binding: other)
            #expect(journal.identity != identity, "a journal of another database or prefix was kept")
            #expect(journal.status.end == 0 && journal.cursor(of: .database) == 0, "the new journal holds the old one's records")
            await Self.close(journal)
        }
        let parent = (folder as NSString).deletingLastPathComponent
        let moved = try FileManager.default.contentsOfDirectory(atPath: parent).filter { $0.hasPrefix((folder as NSString).lastPathComponent + ".moved-") }
        #expect(!moved.isEmpty, "nothing was moved aside")
    }

    @Test func aJournalWithoutABindingIsKeptOnlyWhenEmptyOrKnownToTheDatabase() {
        let wanted = Self.binding
        #expect(wanted.verdict(saved: nil, holdsRecords: false, knownToDatabase: false) == .keep)
        #expect(wanted.verdict(saved: nil, holdsRecords: true, knownToDatabase: true) == .keep)
        guard case .moveAside = wanted.verdict(saved: nil, holdsRecords: true, knownToDatabase: false) else {
            Issue.record("a journal without a binding that the database never applied was kept")
            return
        }
        #expect(wanted.verdict(saved: wanted, holdsRecords: true, knownToDatabase: false) == .keep)
        #expect(JournalBinding(text: wanted.text) == wanted)
        #expect(JournalBinding(text: "database x\n") == nil)
    }

    @Test func aWaitForTheWriterEndsWhenItAppliesThePositionOrWhenTheJournalStops() async throws {
        let journal = try Self.opened(Journal(directory: Self.folder(), logger: Self.logger))
        for index in 1 ... 3 { journal.append(Self.record(index)) }
        let entries = await Self.read(3, journal, from: journal.start)
        let end = try #require(entries.last?.end)
        let answered = Mutex(false)
        let waiting = Task {
            let reached = await journal.waitUntilApplied(end)
            answered.withLock { $0 = true }
            return reached
        }
        try await Task.sleep(for: .milliseconds(50))
        journal.consumed(.database, upTo: entries[1].end)
        try await Task.sleep(for: .milliseconds(50))
        #expect(answered.withLock { $0 } == false, "answered before the writer reached the position")
        journal.consumed(.database, upTo: end)
        #expect(await waiting.value == true)
        #expect(await journal.waitUntilApplied(end) == true, "reached before the wait")
        journal.append(Self.record(4))
        let later = Task { await journal.waitUntilApplied(end + 1_000) }
        try await Task.sleep(for: .milliseconds(50))
        await Self.close(journal)
        #expect(await later.value == false, "the journal stopped first")
    }
}
