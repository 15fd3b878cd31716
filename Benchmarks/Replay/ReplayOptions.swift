import PresenceCore

/// The replay benchmark's command line: an unknown flag or a bad value is an error, not a default.
struct ReplayOptions: EngineBenchOptions {
    static let usage = """
        usage: presence-bench replay [--people N] [--minutes M] [--runs R] [--shards S] [--ticks] [--health] [--write PATH] [--set KEY=VALUE]...

          --people N         people in the simulated expo (default 60)
          --minutes M        minutes recorded (default 60)
          --runs R           replays of the recording, the median printed (default 3)
          --shards S         the recording as the nodes of a venue of S shards publish it
          --ticks            tick the core every 100 ms of arrival time, as the live loop does
          --health           watch the fleet's health as the live aggregator does
          --write PATH       write the recording to PATH and its registry to PATH.registry instead
          --set KEY=VALUE    change an engine figure (repeatable); keys: \(EngineSettings.keys.joined(separator: ", "))
        """

    var people = 60
    var minutes = 60
    var runs = 3
    var shards: Shards?
    var ticks = false
    var health = false
    var write: String?
    var overrides: [(key: String, value: String)] = []

    /// The options in `arguments`, or nil when help was asked for.
    static func parse(_ arguments: [String]) throws(ValueError) -> ReplayOptions? {
        var options = ReplayOptions()
        var rest = arguments[...]
        func value(of flag: String) throws(ValueError) -> String {
            guard let value = rest.popFirst() else { throw ValueError("\(flag) needs a value") }
            return value
        }
        func count(of flag: String) throws(ValueError) -> Int {
            let text = try value(of: flag)
            guard let count = Int(text), count >= 1 else { throw ValueError("\(flag) '\(text)' is not valid: expected a whole number of at least 1") }
            return count
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--help", "-h": return nil
            case "--people": options.people = try count(of: argument)
            case "--minutes": options.minutes = try count(of: argument)
            case "--runs": options.runs = try count(of: argument)
            case "--shards": options.shards = try Shards(count: count(of: argument))
            case "--ticks": options.ticks = true
            case "--health": options.health = true
            case "--write": options.write = try value(of: argument)
            case "--set": options.overrides.append(try EngineSettings.override(value(of: argument)))
            default:
                throw ValueError("argument '\(argument)' is not known: expected --people N, --minutes M, --runs R, --shards S, --ticks, --health, --write PATH or --set KEY=VALUE")
            }
        }
        return options
    }
}
