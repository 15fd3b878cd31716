/// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed 64-bit hash, fast on short inputs, used here
/// to replace advertiser addresses by stable pseudonyms that only holders of the key can link back.
public struct SipHash24: Sendable {
    /// A 128-bit key, as two little-endian 64-bit words.
    public struct Key: Hashable, Sendable {
        public var k0: UInt64
        public var k1: UInt64

        public init(k0: UInt64, k1: UInt64) {
            self.k0 = k0
            self.k1 = k1
        }

        /// The key from 16 bytes, as the reference implementation reads them (little-endian words).
        public init?(bytes: [UInt8]) {
            guard bytes.count == 16 else { return nil }
            k0 = bytes[0 ..< 8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
            k1 = bytes[8 ..< 16].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }

        /// A key derived from a secret text: each word is the SipHash-2-4, under the all-zero key, of a
        /// one-byte label (0 or 1) followed by the text's UTF-8. This only spreads the secret over 128
        /// bits; it does not slow down guessing, so the secret must itself be long and random.
        public init(secret: String) {
            let zero = Key(k0: 0, k1: 0)
            k0 = SipHash24.hash([0] + Array(secret.utf8), key: zero)
            k1 = SipHash24.hash([1] + Array(secret.utf8), key: zero)
        }
    }

    /// The 64-bit SipHash-2-4 of `message` under `key`. The reference implementation writes it out
    /// least significant byte first.
    public static func hash(_ message: [UInt8], key: Key) -> UInt64 {
        hash(message.span, key: key)
    }

    static func hash(_ message: Span<UInt8>, key: Key) -> UInt64 {
        var state = State(key: key)
        let whole = message.count & ~7
        var offset = 0
        while offset < whole {
            var word: UInt64 = 0
            for index in (offset ..< offset + 8).reversed() { word = word << 8 | UInt64(message[index]) }
            state.compress(word)
            offset += 8
        }
        var last = UInt64(truncatingIfNeeded: message.count) << 56
        for index in (whole ..< message.count).reversed() {
            last |= UInt64(message[index]) << (8 * UInt64(index - whole))
        }
        state.compress(last)
        return state.finalize()
    }

    private struct State {
        var v0: UInt64
        var v1: UInt64
        var v2: UInt64
        var v3: UInt64

        init(key: Key) {
            v0 = key.k0 ^ 0x736F_6D65_7073_6575
            v1 = key.k1 ^ 0x646F_7261_6E64_6F6D
            v2 = key.k0 ^ 0x6C79_6765_6E65_7261
            v3 = key.k1 ^ 0x7465_6462_7974_6573
        }

        mutating func round() {
            v0 &+= v1; v1 = v1.rotatedLeft(13); v1 ^= v0; v0 = v0.rotatedLeft(32)
            v2 &+= v3; v3 = v3.rotatedLeft(16); v3 ^= v2
            v0 &+= v3; v3 = v3.rotatedLeft(21); v3 ^= v0
            v2 &+= v1; v1 = v1.rotatedLeft(17); v1 ^= v2; v2 = v2.rotatedLeft(32)
        }

        mutating func compress(_ word: UInt64) {
            v3 ^= word
            round()
            round()
            v0 ^= word
        }

        mutating func finalize() -> UInt64 {
            v2 ^= 0xFF
            round()
            round()
            round()
            round()
            return v0 ^ v1 ^ v2 ^ v3
        }
    }
}

extension UInt64 {
    @inline(__always)
    fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 {
        self << count | self >> (64 - count)
    }
}
