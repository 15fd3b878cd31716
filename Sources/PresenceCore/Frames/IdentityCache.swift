/// The decoder's memory of advertisers: each one's canonical identity text, the verdict of the
/// allow and deny lists on it, its latest address as published, when it was last heard, and
/// telemetry waiting for its next sighting. Set-associative (eight entries per set): a lookup costs
/// at most eight key comparisons whatever the traffic, and colliding keys (even crafted ones) only
/// evict each other, so the texts are made again; they never slow the table down.
struct IdentityCache {
    /// What names an advertiser: its beacon identity's fields, or its address (tag 4).
    struct Key: Equatable {
        var tag: UInt8
        var high: UInt128
        var low: UInt64

        /// A 64-bit mix of the key's bits; only its low bits pick the set.
        var mixed: UInt64 {
            var value = UInt64(truncatingIfNeeded: high) ^ UInt64(truncatingIfNeeded: high >> 64) &* 0x9E37_79B9_7F4A_7C15
            value ^= low &* 0xC2B2_AE3D_27D4_EB4F ^ UInt64(tag)
            value = (value ^ value >> 32) &* 0xD6E8_FEB8_6659_FD93
            value = (value ^ value >> 32) &* 0xD6E8_FEB8_6659_FD93
            return value ^ value >> 32
        }
    }

    struct Entry {
        var id: String
        var verdict: AdvertisementDecoder.DropReason?
        /// The address it was last heard from, and that address as published.
        var address: UInt64
        var addr: String
        var lastSeen: Int64
        /// Telemetry heard from its address since its last sighting.
        var telemetry: Telemetry?
        var telemetryAt: Int64

        static let unused = Entry(id: "", verdict: nil, address: 0, addr: "", lastSeen: 0, telemetry: nil, telemetryAt: 0)
    }

    static let ways = 8
    /// Each slot's key mix (never 0 for a used slot), compared before the key: one cache line per set.
    private var mixes: [UInt64]
    private var keys: [Key]
    private var entries: [Entry]
    private var nextVictim: [UInt8]
    private let setMask: Int

    /// A cache of at least `capacity` entries (rounded up to a power of two, at least eight).
    init(capacity: Int) {
        var sets = 1
        while sets * IdentityCache.ways < capacity { sets *= 2 }
        setMask = sets - 1
        mixes = Array(repeating: 0, count: sets * IdentityCache.ways)
        keys = Array(repeating: Key(tag: 0, high: 0, low: 0), count: sets * IdentityCache.ways)
        entries = Array(repeating: .unused, count: sets * IdentityCache.ways)
        nextVictim = Array(repeating: 0, count: sets)
    }

    /// Where `key` is held, if it is.
    func find(_ key: Key) -> Int? {
        let mix = key.mixed | 1
        let base = Int(truncatingIfNeeded: mix >> 1) & setMask &* IdentityCache.ways
        for index in base ..< base + IdentityCache.ways where mixes[index] == mix && keys[index] == key {
            return index
        }
        return nil
    }

    /// Stores `entry` for `key` (which must not be held), in a free way of its set or in place of
    /// the set's oldest insertion; returns where.
    mutating func insert(_ key: Key, _ entry: Entry) -> Int {
        let mix = key.mixed | 1
        let set = Int(truncatingIfNeeded: mix >> 1) & setMask
        let base = set &* IdentityCache.ways
        var slot = base + Int(nextVictim[set])
        for index in base ..< base + IdentityCache.ways where mixes[index] == 0 {
            slot = index
            break
        }
        if slot == base + Int(nextVictim[set]) {
            nextVictim[set] = (nextVictim[set] + 1) % UInt8(IdentityCache.ways)
        }
        mixes[slot] = mix
        keys[slot] = key
        entries[slot] = entry
        return slot
    }

    subscript(index: Int) -> Entry {
        _read { yield entries[index] }
        _modify { yield &entries[index] }
    }
}
