import Foundation
import PresenceCore

/// A benchmark's command line that may change the engine's figures (`--set KEY=VALUE`, the keys
/// `EngineSettings` knows).
protocol EngineBenchOptions {
    static var usage: String { get }
    /// The options in `arguments`, or nil when help was asked for.
    static func parse(_ arguments: [String]) throws(ValueError) -> Self?
    var overrides: [(key: String, value: String)] { get }
}

extension EngineBenchOptions {
    /// `--set`'s value, KEY=VALUE, as an override (split at the first `=`).
    static func override(_ setting: String) throws(ValueError) -> (key: String, value: String) {
        guard let equals = setting.firstIndex(of: "="), equals != setting.startIndex else {
            throw ValueError("--set '\(setting)' is not valid: expected KEY=VALUE, such as switch-margin=6")
        }
        return (String(setting[..<equals]), String(setting[setting.index(after: equals)...]))
    }

    /// The options in `arguments` and the pipeline configuration their overrides give, or nil when
    /// help was asked for (the usage is printed). A bad command line exits 64 with one line naming
    /// what was wrong.
    static func read(_ arguments: [String]) -> (options: Self, configuration: PresencePipeline.Configuration)? {
        do {
            guard let options = try parse(arguments) else {
                print(usage)
                return nil
            }
            return (options, try EngineSettings.configuration(options.overrides))
        } catch {
            warn(error.message)
            exit(64)
        }
    }
}
