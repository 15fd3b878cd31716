/// Replaces advertiser addresses by keyed pseudonyms: SipHash-2-4 of the six address bytes (display
/// order) under a key derived from a secret; the first six bytes of the hash (in the reference
/// implementation's output order) become the new address, with its top two bits set to `11`, as in a
/// random static address, so `mac:<pseudonym>` is still a valid identity. The same secret gives the
/// same pseudonym on every node and run; another secret gives unrelated ones.
public struct AddressHasher: Sendable {
    public let key: SipHash24.Key

    public init(key: SipHash24.Key) {
        self.key = key
    }

    public init(secret: String) {
        self.init(key: SipHash24.Key(secret: secret))
    }

    public func pseudonym(for address: BluetoothAddress) -> BluetoothAddress {
        var message = InlineArray<6, UInt8>(repeating: 0)
        for index in 0 ..< 6 {
            message[index] = UInt8(truncatingIfNeeded: address.rawValue >> (8 * (5 - index)))
        }
        let digest = SipHash24.hash(message.span, key: key)
        var value: UInt64 = 0
        for index in 0 ..< 6 {
            value = value << 8 | (digest >> (8 * UInt64(index)) & 0xFF)
        }
        return BluetoothAddress(rawValue: value | 0xC000_0000_0000)
    }
}
