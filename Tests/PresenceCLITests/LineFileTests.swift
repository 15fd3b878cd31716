import Foundation
import PresenceCLI
import Testing

@Suite struct LineFileTests {
    private func lines(of contents: [UInt8]) throws -> [[UInt8]] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lines-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(contents).write(to: URL(fileURLWithPath: path))
        var lines: [[UInt8]] = []
        try LineFile(path: path).forEachLine { lines.append(Array($0)) }
        return lines
    }

    @Test func givesEveryNonEmptyLineInOrderAcrossBlocksWithOrWithoutAFinalNewline() throws {
        // Lines around the 4 MiB block: one longer than a block, many short ones straddling block ends.
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 5 << 20)
        var expected: [[UInt8]] = [Array("first".utf8), long]
        expected += (0 ..< 200_000).map { Array("line \($0) of the recording".utf8) }
        var contents: [UInt8] = []
        for (index, line) in expected.enumerated() {
            contents += line
            contents += index % 1000 == 0 ? [0x0A, 0x0A] : [0x0A]
        }
        #expect(try lines(of: contents) == expected)
        contents.removeLast()
        #expect(try lines(of: contents) == expected, "the last line has no newline")
        #expect(try lines(of: []) == [])
        #expect(try lines(of: [0x0A, 0x0A]) == [])
    }

    @Test func aMissingFileIsRefusedNamingIt() {
        #expect(throws: (any Error).self) { try LineFile(path: "/nonexistent/day.jsonl") }
        do {
            _ = try LineFile(path: "/nonexistent/day.jsonl")
        } catch {
            #expect("\(error)".contains("/nonexistent/day.jsonl"))
        }
    }
}
