/// Derives an event's id from its content, so that the same event gets the same id when it is
/// published again after a crash, and `replay` prints the ids the live aggregator published.
/// The id is a 128-bit hash formatted like a UUID (version nibble 8, "custom") of the text
/// `kind␟user␟device␟place␟at[␟entered]` (␟ being U+001F), read byte by byte as it is written,
/// without making the text.
public enum EventID {
    /// A beacon's event: the place is the beacon's key.
    public static func make(kind: PresenceEvent.Kind, user: String, device: String, beacon: String, at: Int64, entered: Int64?) -> String {
        make(kind: kind, user: user, device: device, placePrefix: "", place: beacon, at: at, entered: entered)
    }

    /// An event at a place spelled `placePrefix` then `place` (a zone's: `zone:` and its key).
    static func make(kind: PresenceEvent.Kind, user: String, device: String, placePrefix: StaticString, place: String, at: Int64,
                     entered: Int64?) -> String {
        var hash = Hash()
        hash.add(kind.rawValue)
        hash.add(0x1F)
        hash.add(user)
        hash.add(0x1F)
        hash.add(device)
        hash.add(0x1F)
        placePrefix.withUTF8Buffer { for byte in $0 { hash.add(byte) } }
        hash.add(place)
        hash.add(0x1F)
        hash.add(decimal: at)
        if let entered {
            hash.add(0x1F)
            hash.add(decimal: entered)
        }
        var high = hash.high, low = hash.low
        high = mix(high ^ low.rotateLeft(17))
        low = mix(low ^ high.rotateLeft(31))
        high = (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_8000
        low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            func put(_ value: UInt64, digits: Int, dash: Bool) {
                for shift in stride(from: (digits - 1) * 4, through: 0, by: -4) {
                    let nibble = UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 0xF
                    buffer[index] = nibble < 10 ? nibble + 0x30 : nibble + 0x57
                    index += 1
                }
                if dash {
                    buffer[index] = UInt8(ascii: "-")
                    index += 1
                }
            }
            put(high >> 32, digits: 8, dash: true)
            put(high >> 16, digits: 4, dash: true)
            put(high, digits: 4, dash: true)
            put(low >> 48, digits: 4, dash: true)
            put(low, digits: 12, dash: false)
            return index
        }
    }

    /// Two FNV-1a-style 64-bit lanes over the same bytes.
    private struct Hash {
        var high: UInt64 = 0xCBF2_9CE4_8422_2325
        var low: UInt64 = 0x8422_2325_CBF2_9CE4

        mutating func add(_ byte: UInt8) {
            high = (high ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            low = (low ^ UInt64(byte)) &* 0x9E37_79B9_7F4A_7C15
        }

        mutating func add(_ text: String) {
            for byte in text.utf8 { add(byte) }
        }

        /// `value` in decimal, as `String(value)` spells it.
        mutating func add(decimal value: Int64) {
            if value < 0 { add(UInt8(ascii: "-")) }
            let magnitude = value.magnitude
            // The largest power of ten within it; never past it, so never past UInt64.max.
            var divisor: UInt64 = 1
            while magnitude / divisor >= 10 { divisor *= 10 }
            repeat {
                add(UInt8(magnitude / divisor % 10) + 0x30)
                divisor /= 10
            } while divisor > 0
        }
    }

    /// SplitMix64's finaliser: every input bit affects every output bit.
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension UInt64 {
    fileprivate func rotateLeft(_ bits: UInt64) -> UInt64 {
        (self << bits) | (self >> (64 - bits))
    }
}
