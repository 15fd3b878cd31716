import Foundation
import PresenceCore

/// Writes a chart to a file: the SVG as it is, or a PNG rendered from it by `rsvg-convert`
/// (Debian's librsvg2-bin) when the file's name ends in `.png`.
enum ChartFile {
    enum Kind: Sendable {
        case svg, png
    }

    /// What a file name asks for; anything but `.svg` or `.png` is refused before any work.
    static func kind(of path: String) throws -> Kind {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "svg": .svg
        case "png": .png
        default: throw ValueError("--chart '\(path)' is not valid: expected a file name ending in .svg or .png")
        }
    }

    static func write(_ svg: String, to path: String, as kind: Kind) throws {
        switch kind {
        case .svg:
            do {
                try Data(svg.utf8).write(to: URL(fileURLWithPath: path))
            } catch {
                throw ValueError("--chart '\(path)' could not be written: \(error.localizedDescription)")
            }
        case .png:
            try renderPNG(svg, to: path)
        }
    }

    /// Runs `rsvg-convert` over the SVG, kept in a temporary file meanwhile.
    private static func renderPNG(_ svg: String, to path: String) throws {
        guard let converter = executable(named: "rsvg-convert") else {
            throw ValueError("rsvg-convert was not found on PATH: install Debian's librsvg2-bin (scripts/install-deps.sh does) to write PNG, or give --chart a .svg file")
        }
        let source = FileManager.default.temporaryDirectory.appendingPathComponent("presencectl-chart-\(getpid()).svg")
        try Data(svg.utf8).write(to: source)
        defer { try? FileManager.default.removeItem(at: source) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: converter)
        process.arguments = ["--format", "png", "--output", path, source.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let line = message.split(whereSeparator: \.isNewline).first.map(String.init) ?? "exit status \(process.terminationStatus)"
            throw ValueError("rsvg-convert could not write '\(path)': \(line)")
        }
    }

    /// The first executable file called `name` in the directories of PATH.
    private static func executable(named name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
