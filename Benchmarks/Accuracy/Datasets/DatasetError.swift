import Foundation

/// A dataset file that is missing or not as expected; the message names the file (and line).
struct DatasetError: Error, CustomStringConvertible {
    let message: String

    init(_ message: String) {
        self.message = message
    }

    var description: String { message }
}

/// Reading dataset files.
enum DatasetFiles {
    /// The UTF-8 text of `path`.
    static func text(_ path: String) throws(DatasetError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DatasetError("\(path): cannot be read")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The non-empty lines of `path`, without line ends.
    static func lines(_ path: String) throws(DatasetError) -> [Substring] {
        try text(path).split(whereSeparator: \.isNewline).filter { !$0.allSatisfy(\.isWhitespace) }
    }

    /// The names in `directory` ending with `suffix`, sorted.
    static func names(in directory: String, ending suffix: String) throws(DatasetError) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            throw DatasetError("\(directory): cannot be listed")
        }
        return names.filter { $0.hasSuffix(suffix) }.sorted()
    }
}
