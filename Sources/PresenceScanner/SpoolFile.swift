#if canImport(Glibc)
import Glibc
#endif
import PresenceCore

/// The batches of one node that the broker has not acknowledged yet, kept on disk so that a
/// restarted scanner still sends them: an append-only file of batches (one JSON line each) and a
/// count of how many of its lines are done (acknowledged or dropped). When everything is done,
/// both are emptied. Used from one place at a time (the publisher's lock).
final class SpoolFile: @unchecked Sendable {  // every call happens under NodePublisher's lock
    private let linesPath: String
    private let donePath: String
    private var descriptor: Int32
    private var lines: Int
    private var done: Int

    /// Opens (or creates) the spool of `node` in `directory`.
    init(directory: String, node: String) throws {
        linesPath = "\(directory)/\(node).spool"
        donePath = "\(directory)/\(node).done"
        descriptor = open(linesPath, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ValueError("--spool-dir '\(directory)': cannot open \(linesPath): \(String(cString: strerror(errno)))")
        }
        lines = 0
        done = 0
        lines = SpoolFile.readAll(linesPath).split(separator: 0x0A, omittingEmptySubsequences: true).count
        done = min(lines, Int(String(decoding: SpoolFile.readAll(donePath), as: UTF8.self).filter(\.isNumber)) ?? 0)
    }

    /// The lines written and not done, oldest first.
    func pending() -> [[UInt8]] {
        Array(SpoolFile.readAll(linesPath).split(separator: 0x0A, omittingEmptySubsequences: true).dropFirst(done).map(Array.init))
    }

    /// Appends one batch line and syncs it to disk.
    func append(_ line: [UInt8]) {
        var bytes = line
        bytes.append(0x0A)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written == bytes.count {
            fsync(descriptor)
            lines += 1
        }
    }

    /// Marks the oldest `count` lines done; empties the spool once all are.
    func markDone(_ count: Int) {
        done = min(lines, done + count)
        if done == lines {
            _ = ftruncate(descriptor, 0)
            lines = 0
            done = 0
        }
        let text = Array("\(done)\n".utf8)
        let temporary = donePath + ".tmp"
        let file = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard file >= 0 else { return }
        _ = text.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
        fsync(file)
        Glibc.close(file)
        rename(temporary, donePath)
    }

    func close() {
        if descriptor >= 0 {
            Glibc.close(descriptor)
            descriptor = -1
        }
    }

    private static func readAll(_ path: String) -> [UInt8] {
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return [] }
        defer { Glibc.close(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0 ..< count])
        }
        return bytes
    }
}
