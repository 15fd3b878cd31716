/// `presence-bench`: the project's benchmarks, each printing its figures as a table.
///
///     swift run -c release presence-bench accuracy [options]   engine and baselines against ground truth
///     swift run -c release presence-bench decode [options]     advertising-report decoding throughput
///     swift run -c release presence-bench replay [options]     pipeline throughput over a recorded day
///     swift run -c release presence-bench capture --out FILE   a btsnoop capture at a steady report rate
///     swift run -c release presence-bench reports [options]    the analysts' reports over 10 million sessions
///     swift run -c release presence-bench calibration [options] one self-calibration fit as venues grow
///     swift run -c release presence-bench memory [options]     what the core holds per registered device
///     scripts/aggregator-bench.sh [options]                     the aggregator end to end through real servers

#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "accuracy":
    AccuracyBenchmark.main(Array(arguments.dropFirst()))
case "decode":
    DecodeBenchmark.main(Array(arguments.dropFirst()))
case "capture":
    CaptureWriter.main(Array(arguments.dropFirst()))
case "replay":
    ReplayBenchmark.main(Array(arguments.dropFirst()))
case "aggregator":
    await AggregatorBenchmark.main(Array(arguments.dropFirst()))
case "reports":
    await ReportsBenchmark.main(Array(arguments.dropFirst()))
case "calibration":
    CalibrationBenchmark.main(Array(arguments.dropFirst()))
case "memory":
    MemoryBenchmark.main(Array(arguments.dropFirst()))
default:
    print("usage: presence-bench accuracy|decode|replay|capture|aggregator|reports|calibration|memory [options]  (each takes --help)")
    exit(arguments.isEmpty ? 0 : 64)
}
