import Testing
@testable import PresenceCore

/// The cache from a registered device to its user's track slot: sized for the registry, it finds
/// most devices of a large venue where its first 4,096 entries find few.
@Suite struct TrackSlotCacheTests {
    static let devices = (0 ..< 20_000).map { ObservedDevice(user: "u-\($0)", identity: "tag-\($0)") }

    /// The share of `devices` the cache still finds after remembering each in turn.
    static func found(_ cache: inout TrackSlotCache) -> Double {
        for (slot, device) in devices.enumerated() { cache.remember(device, slot: slot) }
        let hits = devices.enumerated().filter { cache.slot(for: $0.element) == $0.offset }.count
        return Double(hits) / Double(devices.count)
    }

    @Test func sizedForTheRegistryItFindsMostDevices() {
        var unsized = TrackSlotCache()
        var sized = TrackSlotCache()
        sized.size(forDevices: Self.devices.count)
        let before = Self.found(&unsized)
        let after = Self.found(&sized)
        #expect(before < 0.3, "the first 4,096 entries found \(before) of 20,000 devices")
        #expect(after > 0.6, "sized for 20,000 devices, the cache found only \(after) of them")
    }

    @Test func aSlotIsFoundOnlyForTheDeviceThatWasRemembered() {
        var cache = TrackSlotCache()
        cache.size(forDevices: 10)
        let first = ObservedDevice(user: "a", identity: "tag-a")
        let other = ObservedDevice(user: "a", identity: "tag-a")
        cache.remember(first, slot: 7)
        #expect(cache.slot(for: first) == 7)
        #expect(cache.slot(for: other) == nil, "another description of the same device is a different object")
    }
}
