import Foundation
import Testing
@testable import PresenceScanner

/// The scanner's spool on a real file system: what the broker has not acknowledged survives a
/// restart, in order, and a spool whose every line is done is emptied.
@Suite struct SpoolFileTests {
    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("spool-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func whatIsNotDoneSurvivesARestartInOrder() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var spool = try SpoolFile(directory: folder, node: "hall-a")
        for index in 1 ... 5 { spool.append(Array("{\"seq\":\(index)}".utf8)) }
        spool.markDone(2)
        spool.close()
        spool = try SpoolFile(directory: folder, node: "hall-a")
        #expect(spool.pending().map { String(decoding: $0, as: UTF8.self) } == [#"{"seq":3}"#, #"{"seq":4}"#, #"{"seq":5}"#])
        spool.markDone(3)
        #expect(spool.pending().isEmpty)
        let size = try FileManager.default.attributesOfItem(atPath: folder + "/hall-a.spool")[.size] as? Int
        #expect(size == 0, "a spool with every line done is emptied")
        spool.close()
        spool = try SpoolFile(directory: folder, node: "hall-a")
        #expect(spool.pending().isEmpty)
        spool.close()
    }

    @Test func anUnwritableFolderIsNamedInTheError() {
        #expect(throws: (any Error).self) { try SpoolFile(directory: "/proc/no-such-folder", node: "n") }
    }
}

/// A spooled batch's line: the payload, behind its shard when it has one; lines of a spool written
/// before sharding read as whole batches.
@Suite struct SpooledBatchTests {
    @Test func aLineCarriesItsShardAndOldLinesReadAsWholeBatches() {
        let payload = Array(#"{"v":1,"node":"n","seq":1,"sent":1,"sightings":[]}"#.utf8)
        let part = SpooledBatch(shard: 12, payload: payload)
        #expect(part.line == Array("12 ".utf8) + payload)
        #expect(SpooledBatch(line: part.line) == part)
        #expect(SpooledBatch(line: payload) == SpooledBatch(shard: nil, payload: payload))
        for bad in ["", "x {}", " {}", "12345 {}", "1024 {}"] {
            #expect(SpooledBatch(line: Array(bad.utf8)) == nil, "\(bad)")
        }
    }
}
