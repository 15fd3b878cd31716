/// A direct-mapped cache in front of the engine's `trackIndex` dictionary: from the registry link
/// an observation carries to the slot of its user's track. A lookup hashes one pointer instead of
/// the user key (the dictionary's SipHash over the key was about 6 % of a replay). An entry holds
/// its link, so no new link can take a freed one's address, and the engine trusts a slot only
/// while it still holds the same user; a miss costs one pointer comparison before the dictionary.
struct TrackSlotCache: Sendable {
    private struct Entry: Sendable {
        let link: ObservedLink
        let slot: Int
    }

    private static let bits = 12
    private var entries = [Entry?](repeating: nil, count: 1 << bits)

    /// The slot last remembered for `link`, if its entry was not taken by another link since.
    func slot(for link: ObservedLink) -> Int? {
        guard let entry = entries[Self.position(of: link)], entry.link === link else { return nil }
        return entry.slot
    }

    mutating func remember(_ link: ObservedLink, slot: Int) {
        entries[Self.position(of: link)] = Entry(link: link, slot: slot)
    }

    /// Fibonacci hashing of the link's address: its top bits pick the entry.
    private static func position(of link: ObservedLink) -> Int {
        let address = UInt64(UInt(bitPattern: ObjectIdentifier(link)))
        return Int(truncatingIfNeeded: (address &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - bits))
    }
}
