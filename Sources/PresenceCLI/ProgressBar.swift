import PresenceCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A progress bar on standard error for long commands (`import`, `replay`), drawn only when
/// standard error is a terminal, so that scripts and logs get the final summary line alone.
/// Redraws at most ten times a second.
public struct ProgressBar {
    private let what: String
    private let total: Int
    private let visible: Bool
    private var drawnAt: Int64 = 0

    public init(_ what: String, total: Int, visible: Bool = isatty(2) == 1) {
        self.what = what
        self.total = max(0, total)
        self.visible = visible && total > 0
    }

    /// `done` of `total` are done.
    public mutating func update(_ done: Int) {
        guard visible else { return }
        let now = WallClock.milliseconds()
        guard now - drawnAt >= 100 || done >= total else { return }
        drawnAt = now
        StandardStreams.errorText("\r" + Self.line(what, done: done, total: total))
    }

    /// Clears the bar (the caller prints its summary next).
    public func finish() {
        guard visible else { return }
        StandardStreams.errorText("\r" + String(repeating: " ", count: 60) + "\r")
    }

    /// `[#########-----------]  45%  450/1000 beacons`
    public static func line(_ what: String, done: Int, total: Int, width: Int = 30) -> String {
        let fraction = total > 0 ? min(1, Double(max(0, done)) / Double(total)) : 1
        let filled = Int((fraction * Double(width)).rounded(.down))
        let percent = Int((fraction * 100).rounded(.down))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
            + (percent < 10 ? "  " : percent < 100 ? " " : "") + "\(percent)%  \(min(max(0, done), total))/\(total) \(what)"
    }
}
