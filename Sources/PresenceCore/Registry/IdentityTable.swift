#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds a value by the UTF-8 bytes of an identity without making a String of them: the
/// aggregator looks up every sighting's identity straight in the payload it arrived in.
/// Open addressing with linear probing over a word-at-a-time hash, keys packed in one byte buffer so a
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

    /// The value stored for exactly this text, if any.
    func value(for text: String) -> Value? {
        var text = text
        return text.withUTF8 { value(for: UnsafeRawBufferPointer($0)) }
    }

    private func matches(_ index: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard Int(lengths[index]) == bytes.count else { return false }
        guard let base = bytes.baseAddress else { return bytes.isEmpty }
        return keys.withUnsafeBytes { keys in
            keys.baseAddress.map { memcmp($0 + Int(starts[index]), base, bytes.count) == 0 } ?? false
        }
    }

    /// Eight bytes at a time, each word mixed in by a multiply and a rotation (the identities are
    /// 20 to 60 bytes of ASCII, mostly alike at the start: every byte must count).
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash = 0xCBF2_9CE4_8422_2325 ^ UInt64(bytes.count)
        var index = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            hash = ((hash ^ word) &* 0x9E37_79B9_7F4A_7C15).rotated(left: 29)
            index += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.count {
            tail |= UInt64(bytes[index]) << shift
            shift += 8
            index += 1
        }
        hash = (hash ^ tail) &* 0x9E37_79B9_7F4A_7C15
        return (hash ^ (hash >> 32)) | 1
    }
}

private extension UInt64 {
    func rotated(left count: UInt64) -> UInt64 {
        (self << count) | (self >> (64 - count))
    }
}
