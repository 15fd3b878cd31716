/// Derives an event's id from its content, so that the same event gets the same id when it is
/// published again after a crash, and `replay` prints the ids the live aggregator published.
/// The id is a 128-bit hash formatted like a UUID (version nibble 8, "custom").
public enum EventID {
    public static func make(kind: PresenceEvent.Kind, user: String, device: String, beacon: String, at: Int64, entered: Int64?) -> String {
        var text = "\(kind.rawValue)\u{1F}\(user)\u{1F}\(device)\u{1F}\(beacon)\u{1F}\(at)"
        if let entered { text += "\u{1F}\(entered)" }
        var high: UInt64 = 0xCBF2_9CE4_8422_2325
        var low: UInt64 = 0x8422_2325_CBF2_9CE4
        for byte in text.utf8 {
            high = (high ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            low = (low ^ UInt64(byte)) &* 0x9E37_79B9_7F4A_7C15
        }
        high = mix(high ^ low.rotateLeft(17))
        low = mix(low ^ high.rotateLeft(31))
        high = (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_8000
        low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        let hex = hexDigits(high, 16) + hexDigits(low, 16)
        let chars = Array(hex)
        return String(chars[0 ..< 8]) + "-" + String(chars[8 ..< 12]) + "-" + String(chars[12 ..< 16]) + "-"
            + String(chars[16 ..< 20]) + "-" + String(chars[20 ..< 32])
    }

    /// SplitMix64's finaliser: every input bit affects every output bit.
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private static func hexDigits(_ value: UInt64, _ count: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, count - text.count)) + text
    }
}

extension UInt64 {
    fileprivate func rotateLeft(_ bits: UInt64) -> UInt64 {
        (self << bits) | (self >> (64 - bits))
    }
}
