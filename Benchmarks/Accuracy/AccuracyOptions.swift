import PresenceCore

/// The accuracy benchmark's command line.
struct AccuracyOptions: EngineBenchOptions {
    static let usage = """
        usage: presence-bench accuracy [--quick] [--markdown] [--per-run] [--data DIR] [--part PART] [--only TEXT]... [--set KEY=VALUE]...

          --quick            smaller simulations (8 people for 20 min instead of 20 for 2 h), for a fast check
          --markdown         print the table as Markdown (for the README)
          --per-run          score each run of a dataset of at most 20 runs (a walk, a recording) as a row of its own beside the dataset's
          --data DIR         the datasets folder (default: the package's data/)
          --part PART        all (default), tuning (the `sim` scenarios and the even-numbered runs of each dataset: what
                             defaults may be chosen on) or reporting (the `grid` scenarios and the odd-numbered runs: held out)
          --only TEXT        score only the scenarios whose name contains TEXT (repeatable)
          --set KEY=VALUE    change an engine figure (repeatable); keys: \(EngineSettings.keys.joined(separator: ", "))
        """

    var quick = false
    var markdown = false
    var perRun = false
    var dataDirectory = AccuracyOptions.defaultDataDirectory
    var part = DataPart.all
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
            case "--per-run": options.perRun = true
            case "--part":
                guard let value = rest.popFirst() else { throw ValueError("--part needs a value") }
                guard let part = DataPart(rawValue: value) else {
                    throw ValueError("--part '\(value)' is not valid: expected all, tuning or reporting")
                }
                options.part = part
            case "--data", "--only", "--set":
                guard let value = rest.popFirst() else { throw ValueError("\(argument) needs a value") }
                switch argument {
                case "--data": options.dataDirectory = value
                case "--only": options.only.append(value)
                default: options.overrides.append(try EngineSettings.override(value))
                }
            default:
                throw ValueError("argument '\(argument)' is not known: expected --quick, --markdown, --per-run, --data DIR, --part PART, --only TEXT or --set KEY=VALUE")
            }
        }
        return options
    }

    /// Whether the scenario called `name` is to be scored.
    func selects(_ name: String) -> Bool {
        only.isEmpty || only.contains { name.contains($0) }
    }

    /// Whether `scenario` is scored in `part` at all (simulations belong to one part each).
    func includes(_ scenario: BenchScenario) -> Bool {
        guard scenario.dataset == nil else { return true }
        switch part {
        case .all: return true
        case .tuning: return !scenario.heldOut
        case .reporting: return scenario.heldOut
        }
    }

    /// The runs of `scenario` that belong to the part (`isTuningRun`).
    func runs(_ runs: [BenchRun], of scenario: BenchScenario) -> [BenchRun] {
        guard scenario.dataset != nil, part != .all else { return runs }
        return runs.enumerated().filter { Self.isTuningRun($0.offset) == (part == .tuning) }.map(\.element)
    }

    /// Whether a dataset's run at `index` (in file-name order) is in the tuning part: a dataset's
    /// runs alternate, the first for tuning.
    static func isTuningRun(_ index: Int) -> Bool {
        index % 2 == 0
    }

    /// The package's own `data` folder, found from this file's place in the package
    /// (`<root>/Benchmarks/Accuracy/AccuracyOptions.swift`).
    static var defaultDataDirectory: String {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return (parts + ["data"]).joined(separator: "/")
    }
}

/// Which share of the data a benchmark run scores: defaults are chosen on the tuning part and
/// reported on the held-out one.
enum DataPart: String {
    case all
    case tuning
    case reporting
}
