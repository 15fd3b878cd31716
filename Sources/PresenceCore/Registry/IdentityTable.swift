#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds a value by the UTF-8 bytes of an identity without making a String of them: the
/// aggregator looks up every sighting's identity straight in the payload it arrived in.
/// Open addressing with linear probing over a word-at-a-time hash; built once, read many times.
/// A slot is one word (part of the key's hash beside the number of its entry), and the entries are
/// exactly as many as the keys, their bytes packed end to end in one buffer, so a lookup touches no
/// reference counts and a table of a registry's 100,000 identities holds about 30 bytes per key
/// besides the keys themselves.
struct IdentityTable<Value: Sendable>: Sendable {
    /// Per slot: the high half of the key's hash, and its entry's number plus one in the low half
    /// (0: empty).
    private let slots: [UInt64]
    /// Where each entry's key starts in `keys`, and one more: where the bytes end.
    private let starts: [Int32]
    private let values: [Value]
    private let keys: [UInt8]
    private let mask: Int

    private static var hashHalf: UInt64 { 0xFFFF_FFFF_0000_0000 }

    /// A table of `pairs`; of a key given twice, the later value stands.
    init(_ pairs: [(String, Value)]) {
        var capacity = 16
        while capacity < pairs.count * 2 { capacity <<= 1 }
        let mask = capacity - 1
        var slots = [UInt64](repeating: 0, count: capacity)
        var starts: [Int32] = [0]
        var values: [Value] = []
        var keys: [UInt8] = []
        starts.reserveCapacity(pairs.count + 1)
        values.reserveCapacity(pairs.count)
        keys.reserveCapacity(pairs.reduce(0) { $0 + $1.0.utf8.count })
        for (key, value) in pairs {
            var key = key
            key.withUTF8 { bytes in
                let bytes = UnsafeRawBufferPointer(bytes)
                let hash = IdentityTable.hash(bytes)
                var index = Int(truncatingIfNeeded: hash) & mask
                while slots[index] != 0 {
                    let entry = Int(truncatingIfNeeded: slots[index] & ~Self.hashHalf) - 1
                    if slots[index] & Self.hashHalf == hash & Self.hashHalf,
                       IdentityTable.matches(entry, bytes, starts: starts, keys: keys) {
                        values[entry] = value
                        return
                    }
                    index = (index + 1) & mask
                }
                slots[index] = hash & Self.hashHalf | UInt64(values.count + 1)
                values.append(value)
                keys.append(contentsOf: bytes)
                starts.append(Int32(keys.count))
            }
        }
        self.mask = mask
        self.slots = slots
        self.starts = starts
        self.values = values
        self.keys = keys
    }

    /// The value stored for exactly these bytes, if any.
    func value(for bytes: UnsafeRawBufferPointer) -> Value? {
        let hash = IdentityTable.hash(bytes)
        var index = Int(truncatingIfNeeded: hash) & mask
        while slots[index] != 0 {
            let entry = Int(truncatingIfNeeded: slots[index] & ~Self.hashHalf) - 1
            if slots[index] & Self.hashHalf == hash & Self.hashHalf, IdentityTable.matches(entry, bytes, starts: starts, keys: keys) {
                return values[entry]
            }
            index = (index + 1) & mask
        }
        return nil
    }

    /// The value stored for exactly this text, if any.
    func value(for text: String) -> Value? {
        var text = text
        return text.withUTF8 { value(for: UnsafeRawBufferPointer($0)) }
    }

    /// Whether the key of `entry` is exactly `bytes`.
    private static func matches(_ entry: Int, _ bytes: UnsafeRawBufferPointer, starts: [Int32], keys: [UInt8]) -> Bool {
        let start = Int(starts[entry])
        guard Int(starts[entry + 1]) - start == bytes.count else { return false }
        guard let base = bytes.baseAddress else { return true }
        return keys.withUnsafeBytes { keys in
            keys.baseAddress.map { memcmp($0 + start, base, bytes.count) == 0 } ?? false
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
        return hash ^ (hash >> 32)
    }
}

private extension UInt64 {
    func rotated(left count: UInt64) -> UInt64 {
        (self << count) | (self >> (64 - count))
    }
}
