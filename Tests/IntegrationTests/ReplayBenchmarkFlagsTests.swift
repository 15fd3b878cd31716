import Testing

/// `presence-bench replay` refuses a flag it does not know or a bad value in one line, instead of
/// running the defaults (a figure taken under settings that were never applied).
@Suite struct ReplayBenchmarkFlagsTests {
    @Test(arguments: [
        (["--layout-weight", "0"], "'--layout-weight' is not known"),
        (["--runs", "0"], "--runs '0'"),
        (["--people", "many"], "--people 'many'"),
        (["--runs"], "--runs needs a value"),
        (["--shards", "2000"], "2000"),
        (["--set", "nope=1"], "'nope'"),
        (["--set", "layout-weight=x"], "layout-weight 'x'"),
        (["--set", "=1"], "--set '=1'"),
    ])
    func badFlagsAreRefusedInOneLine(_ arguments: [String], _ named: String) async throws {
        let bench = try ChildProcess.spawn(try PackagePaths.executable("presence-bench"), ["replay"] + arguments)
        #expect(await bench.wait() == 64)
        #expect(bench.stderr.split(separator: "\n").count == 1 && bench.stderr.contains(named), "\(bench.stderr)")
    }
}
