/// The beacons the `hmm` decision has met, numbered from 1 in the order met, so that a step
/// compares numbers rather than beacon keys. A number is never reused; there are as many as
/// beacon keys the registry has named, a few thousand at most.
struct PlaceNumbers: Sendable {
    private var numbers: [String: Int32] = [:]
    /// Each number's beacon key; 0 stands for none.
    private var names: [String] = [""]

    /// The number of `beacon`, given one if it has none.
    mutating func number(of beacon: String) -> Int32 {
        if let number = numbers[beacon] { return number }
        let number = Int32(truncatingIfNeeded: names.count)
        numbers[beacon] = number
        names.append(beacon)
        return number
    }

    /// The number of `beacon`, or 0 if it has none.
    func existing(_ beacon: String?) -> Int32 {
        beacon.flatMap { numbers[$0] } ?? 0
    }

    /// The beacon key numbered `number` ("" for 0 or a number never given).
    func name(_ number: Int32) -> String {
        names.indices.contains(Int(number)) ? names[Int(number)] : ""
    }
}
