import ArgumentParser
import PresenceCLI
import PresenceCore
import PresenceStore

/// How long history is kept (`--keep-sessions`, `--keep-events`), for the aggregator's periodic
/// purge and `presencectl purge`; `forever` keeps everything of that kind.
public struct RetentionOptions: ParsableArguments {
    @Option(help: "Delete sessions this long after they ended, such as 180d, or 'forever'.")
    public var keepSessions = "180d"

    @Option(help: "Delete published events and sent notifications this long after they happened, such as 30d, or 'forever'.")
    public var keepEvents = "30d"

    public init() {}

    public func retention() throws -> Retention {
        Retention(sessions: try Self.period(keepSessions, what: "--keep-sessions"), events: try Self.period(keepEvents, what: "--keep-events"))
    }

    private static func period(_ text: String, what: String) throws -> Int64? {
        guard text != "forever" else { return nil }
        let milliseconds = try DurationText.milliseconds(text, what: what)
        guard milliseconds >= 60_000, milliseconds <= 100 * 365 * 86_400_000 else {
            throw ValueError("\(what) '\(text)' is not valid: expected a duration from 1m to 100 years, such as 30d, or 'forever'")
        }
        return milliseconds
    }
}
