import ArgumentParser

/// How a query command prints its rows: an aligned table for people, or machine-readable lines.
public enum OutputFormat: Sendable {
    case table, json, csv
}

/// `--json` and `--csv`, shared by every command that prints rows; at most one of them.
public struct OutputOptions: ParsableArguments {
    @Flag(help: "One JSON object per line.") public var json = false
    @Flag(help: "CSV (RFC 4180): a header line, then one record per row; times in ISO 8601, UTC.") public var csv = false

    public init() {}

    public func validate() throws {
        guard !(json && csv) else { throw ValidationError("--json and --csv cannot be used together: choose one") }
    }

    public var format: OutputFormat { json ? .json : csv ? .csv : .table }
}
