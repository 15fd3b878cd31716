/// A direct-mapped cache in front of the engine's `trackIndex` dictionary: from the registered
/// device an observation carries to the slot of its user's track. A lookup hashes one pointer instead of
/// the user key (the dictionary's SipHash over the key was about 6 % of a replay). An entry holds
/// its device, so no new description can take a freed one's address, and the engine trusts a slot only
/// while it still holds the same user; a miss costs one pointer comparison before the dictionary.
struct TrackSlotCache: Sendable {
    private struct Entry: Sendable {
        let device: ObservedDevice
        let slot: Int
    }

    /// 2^bits entries: at least as many as the registered devices (`size(forDevices:)`), 16 bytes
    /// each; at 100,000 devices about 70 % of them keep an entry of their own (4 % with 4,096).
    private var bits = 12
    private var entries = [Entry?](repeating: nil, count: 1 << 12)

    /// Grows the cache to at least `devices` entries (it never shrinks); what it remembered is forgotten.
    mutating func size(forDevices devices: Int) {
        var wanted = bits
        while wanted < 24, 1 << wanted < devices { wanted += 1 }
        guard wanted > bits else { return }
        bits = wanted
        entries = [Entry?](repeating: nil, count: 1 << bits)
    }

    /// The slot last remembered for `device`, if its entry was not taken by another device since.
    func slot(for device: ObservedDevice) -> Int? {
        guard let entry = entries[position(of: device)], entry.device === device else { return nil }
        return entry.slot
    }

    mutating func remember(_ device: ObservedDevice, slot: Int) {
        entries[position(of: device)] = Entry(device: device, slot: slot)
    }

    /// Fibonacci hashing of the device's address: its top bits pick the entry.
    private func position(of device: ObservedDevice) -> Int {
        let address = UInt64(UInt(bitPattern: ObjectIdentifier(device)))
        return Int(truncatingIfNeeded: (address &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - bits))
    }
}
