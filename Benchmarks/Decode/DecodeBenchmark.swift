enum DecodeBenchmark { static func main(_ arguments: [String]) { print("decode: not yet") } }
