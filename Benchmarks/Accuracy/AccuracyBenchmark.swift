enum AccuracyBenchmark { static func main(_ arguments: [String]) { print("accuracy: not yet") } }
