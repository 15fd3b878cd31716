import PresenceCore

/// The accuracy benchmark's command line.
struct AccuracyOptions {
    static let usage = """
        usage: presence-bench accuracy [--quick] [--markdown] [--data DIR] [--only TEXT]... [--set KEY=VALUE]...

          --quick            smaller simulations (8 people for 20 min instead of 20 for 2 h), for a fast check
          --markdown         print the table as Markdown (for the README)
          --data DIR         the datasets folder (default: shared/data beside the package root)
          --only TEXT        score only the scenarios whose name contains TEXT (repeatable)
          --set KEY=VALUE    change an engine figure (repeatable); keys: \(EngineSettings.keys.joined(separator: ", "))
        """

    var quick = false
    var markdown = false
    var dataDirectory = AccuracyOptions.defaultDataDirectory
    var only: [String] = []
    var overrides: [(key: String, value: String)] = []

    /// The options in `arguments`, or nil when help was asked for.
    static func parse(_ arguments: [String]) throws(ValueError) -> AccuracyOptions? {
        var options = AccuracyOptions()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--help", "-h": return nil
            case "--quick": options.quick = true
            case "--markdown": options.markdown = true
            case "--data", "--only", "--set":
                guard let value = rest.popFirst() else { throw ValueError("\(argument) needs a value") }
                switch argument {
                case "--data": options.dataDirectory = value
                case "--only": options.only.append(value)
                default:
                    guard let equals = value.firstIndex(of: "="), equals != value.startIndex else {
                        throw ValueError("--set '\(value)' is not valid: expected KEY=VALUE, such as switch-margin=6")
                    }
                    options.overrides.append((String(value[..<equals]), String(value[value.index(after: equals)...])))
                }
            default:
                throw ValueError("argument '\(argument)' is not known: expected --quick, --markdown, --data DIR, --only TEXT or --set KEY=VALUE")
            }
        }
        return options
    }

    /// Whether the scenario called `name` is to be scored.
    func selects(_ name: String) -> Bool {
        only.isEmpty || only.contains { name.contains($0) }
    }

    /// `../shared/data` from the package root, found from this file's place in the package
    /// (`<root>/Benchmarks/Accuracy/AccuracyOptions.swift`).
    static var defaultDataDirectory: String {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4)
        return (parts + ["shared", "data"]).joined(separator: "/")
    }
}
