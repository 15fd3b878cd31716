import Foundation
import Logging
import PresenceCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The files of a journal folder: segments named by the position (LSN) of their first byte, the
/// journal's identity, its binding (the database and topic prefix it serves), the readers' cursors
/// and a lock. Plain POSIX calls, each failure an `AggregatorError` that names the file and the reason.
enum JournalFiles {
    /// Takes the folder for `binding`: locks it (one aggregator per folder), moves aside a journal
    /// that belongs to another database or prefix (`JournalBinding.verdict`; `storedJournal` is the
    /// journal identity the database last applied) with one warning, and records the binding.
    /// Returns the lock's descriptor and the journal's identity (a new one for a new journal).
    static func claim(_ folder: String, for binding: JournalBinding, storedJournal: String?, logger: Logger) throws -> (lock: Int32, identity: String) {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var lock = try self.lock(folder + "/lock")
        let bindingPath = folder + "/binding"
        let identityPath = folder + "/identity"
        let saved = (try? String(contentsOfFile: bindingPath, encoding: .utf8)).flatMap(JournalBinding.init(text:))
        let savedIdentity = (try? String(contentsOfFile: identityPath, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        do {
            let holdsRecords = try segments(in: folder).contains { try size($0.path) > 0 }
            let verdict = binding.verdict(saved: saved, holdsRecords: holdsRecords,
                                          knownToDatabase: savedIdentity != nil && savedIdentity == storedJournal)
            if case .moveAside(let reason) = verdict {
                let stamp = folder + ".moved-" + ISO8601Text.string(milliseconds: WallClock.milliseconds()).filter { $0 != "-" && $0 != ":" }
                let aside = (0...).lazy.map { $0 == 0 ? stamp : stamp + "-\($0)" }.first { !FileManager.default.fileExists(atPath: $0) } ?? stamp
                guard rename(folder, aside) == 0 else { throw failure("cannot move aside", folder) }
                close(lock)
                lock = -1
                logger.warning("moved aside a journal that belongs to another database or topic prefix; nothing in it is decided, published or stored here",
                               metadata: ["reason": "\(reason)", "moved_to": "\(aside)",
                                          "hint": "give each database its own --client-id or --state-dir; to apply the old journal to its own database, move it back while the aggregator is stopped"])
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                lock = try self.lock(folder + "/lock")
            }
            if saved != binding || verdict != .keep { try replace(bindingPath, with: binding.text) }
            if verdict == .keep, let savedIdentity, !savedIdentity.isEmpty { return (lock, savedIdentity) }
            let identity = UUID().uuidString.lowercased()
            try replace(identityPath, with: identity + "\n")
            return (lock, identity)
        } catch {
            if lock >= 0 { close(lock) }
            throw error
        }
    }

    /// The readers' cursors last saved in `folder` (none for a new journal).
    static func cursors(in folder: String) -> [JournalLedger.Reader: UInt64] {
        var cursors: [JournalLedger.Reader: UInt64] = [:]
        guard let text = try? String(contentsOfFile: folder + "/cursors", encoding: .utf8) else { return cursors }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let reader = JournalLedger.Reader(rawValue: String(parts[0])), let value = UInt64(parts[1]) { cursors[reader] = value }
        }
        return cursors
    }

    /// Saves the readers' cursors in `folder`, whole.
    static func saveCursors(_ cursors: [JournalLedger.Reader: UInt64], in folder: String) throws {
        try replace(folder + "/cursors", with: JournalLedger.Reader.allCases.map { "\($0.rawValue) \(cursors[$0] ?? 0)" }.joined(separator: "\n") + "\n")
    }

    /// A segment file and the position it starts at.
    struct Segment: Sendable {
        var start: UInt64
        var path: String
    }

    static func segmentName(start: UInt64) -> String {
        let digits = String(start)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".seg"
    }

    /// The segments in `directory`, oldest first.
    static func segments(in directory: String) throws -> [Segment] {
        try FileManager.default.contentsOfDirectory(atPath: directory).compactMap { name -> Segment? in
            guard name.hasSuffix(".seg"), let start = UInt64(name.dropLast(4)) else { return nil }
            return Segment(start: start, path: directory + "/" + name)
        }.sorted { $0.start < $1.start }
    }

    /// Takes an exclusive lock on `path` for as long as the process lives (or until closed).
    static func lock(_ path: String) throws -> Int32 {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot open", path) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw AggregatorError("another aggregator uses the journal in \(path.dropLast(5)): give each its own --state-dir or --client-id")
        }
        return descriptor
    }

    /// Opens `path` for appending, creating it (and making its directory entry durable) if needed.
    static func openForAppending(_ path: String) throws -> Int32 {
        let existed = FileManager.default.fileExists(atPath: path)
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot open", path) }
        if !existed { syncDirectory(of: path) }
        return descriptor
    }

    static func write(_ bytes: [UInt8], to descriptor: Int32, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw failure("cannot write", path)
            }
            offset += written
        }
    }

    static func sync(_ descriptor: Int32, path: String) throws {
        guard fdatasync(descriptor) == 0 else { throw failure("cannot flush", path) }
    }

    /// Up to `count` bytes of `path` from `offset` (fewer at its end).
    static func read(_ path: String, from offset: UInt64, count: Int) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open", path) }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + filled, count - filled, off_t(offset) + off_t(filled)) }
            if got < 0 {
                if errno == EINTR { continue }
                throw failure("cannot read", path)
            }
            if got == 0 { break }
            filled += got
        }
        bytes.removeLast(count - filled)
        return bytes
    }

    static func size(_ path: String) throws -> UInt64 {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open", path) }
        defer { close(descriptor) }
        let end = lseek(descriptor, 0, SEEK_END)
        guard end >= 0 else { throw failure("cannot read the size of", path) }
        return UInt64(end)
    }

    static func truncate(_ path: String, to length: UInt64) throws {
        guard Glibc.truncate(path, off_t(length)) == 0 else { throw failure("cannot truncate", path) }
    }

    static func remove(_ path: String) throws {
        guard unlink(path) == 0 || errno == ENOENT else { throw failure("cannot delete", path) }
    }

    /// Replaces `path` with `text` whole: written beside it, then renamed over it.
    static func replace(_ path: String, with text: String) throws {
        let temporary = path + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot open", temporary) }
        do {
            try write(Array(text.utf8), to: descriptor, path: temporary)
            close(descriptor)
        } catch {
            close(descriptor)
            throw error
        }
        guard rename(temporary, path) == 0 else { throw failure("cannot rename", temporary) }
    }

    /// Makes a new file's directory entry durable.
    static func syncDirectory(of path: String) {
        let directory = open(URL(fileURLWithPath: path).deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return }
        _ = fsync(directory)
        close(directory)
    }

    private static func failure(_ what: String, _ path: String) -> AggregatorError {
        AggregatorError("\(what) \(path): \(String(cString: strerror(errno)))")
    }
}
