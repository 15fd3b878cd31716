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
