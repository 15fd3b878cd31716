import Foundation

/// The value after `flag` in a benchmark's arguments (`--runs 3`), or nil when the flag is absent
/// or last.
func benchArgument(_ arguments: [String], _ flag: String) -> String? {
    guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

/// A 64-bit FNV-1a digest, so that two builds' results can be compared at a glance.
struct BenchDigest {
    private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    mutating func add(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x100_0000_01B3
    }

    mutating func add(_ text: String) {
        for byte in text.utf8 { add(byte) }
    }

    /// The eight bytes of `number`'s bit pattern, lowest first.
    mutating func add(_ number: Double) {
        var bits = number.bitPattern
        for _ in 0 ..< 8 {
            add(UInt8(truncatingIfNeeded: bits))
            bits >>= 8
        }
    }
}

/// Writes `message` and a newline to standard error.
func warn(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
