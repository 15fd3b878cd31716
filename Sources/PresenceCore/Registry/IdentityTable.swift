#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds a value by the UTF-8 bytes of an identity without making a String of them: the
/// aggregator looks up every sighting's identity straight in the payload it arrived in.
/// Open addressing with linear probing over FNV-1a hashes, keys packed in one byte buffer so a
/// lookup touches no reference counts; built once, read many times.
struct IdentityTable<Value: Sendable>: Sendable {
    /// Per slot: the key's hash with the low bit set (0: empty).
    private var hashes: [UInt64]
    /// Per slot: where the key starts in `keys`, and its length.
    private var starts: [Int32]
    private var lengths: [Int32]
    private var values: [Value?]
    private var keys: [UInt8] = []
    private let mask: Int

    init(_ pairs: [(String, Value)]) {
        var capacity = 16
        while capacity < pairs.count * 2 { capacity <<= 1 }
        hashes = Array(repeating: 0, count: capacity)
        starts = Array(repeating: 0, count: capacity)
        lengths = Array(repeating: 0, count: capacity)
        values = Array(repeating: nil, count: capacity)
        mask = capacity - 1
        for (key, value) in pairs {
            let bytes = Array(key.utf8)
            let hash = bytes.withUnsafeBytes { IdentityTable.hash($0) }
            var index = Int(truncatingIfNeeded: hash) & mask
            while hashes[index] != 0, !(hashes[index] == hash && bytes.withUnsafeBytes({ matches(index, $0) })) {
                index = (index + 1) & mask
            }
            hashes[index] = hash
            starts[index] = Int32(keys.count)
            lengths[index] = Int32(bytes.count)
            values[index] = value
            keys.append(contentsOf: bytes)
        }
    }

    /// The value stored for exactly these bytes, if any.
    func value(for bytes: UnsafeRawBufferPointer) -> Value? {
        let hash = IdentityTable.hash(bytes)
        var index = Int(truncatingIfNeeded: hash) & mask
        while hashes[index] != 0 {
            if hashes[index] == hash, matches(index, bytes) { return values[index] }
            index = (index + 1) & mask
        }
        return nil
    }

    private func matches(_ index: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard Int(lengths[index]) == bytes.count else { return false }
        guard let base = bytes.baseAddress else { return bytes.isEmpty }
        return keys.withUnsafeBytes { keys in
            keys.baseAddress.map { memcmp($0 + Int(starts[index]), base, bytes.count) == 0 } ?? false
        }
    }

    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return (hash ^ (hash >> 29)) | 1
    }
}
