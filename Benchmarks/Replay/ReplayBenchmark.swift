enum ReplayBenchmark { static func main(_ arguments: [String]) { print("replay: not yet") } }
