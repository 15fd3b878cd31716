import Testing
@testable import PresenceCore

@Suite struct IdentityTableTests {
    /// Identities of every length around the hash's 8-byte words, many sharing long prefixes.
    static let keys: [String] = {
        var keys = (0 ..< 500).map { "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:9:\($0)" }
        keys += (0 ..< 40).map { String(repeating: "x", count: $0 + 1) }
        keys += ["mac:c4:7c:8d:6a:2b:01", "mac:c4:7c:8d:6a:2b:02", "node:badge-1", "eddystone:edd1ebeac04e5defa017:0123456789ab"]
        return keys
    }()

    @Test func findsEveryKeyItWasBuiltWithAndNothingElse() {
        let table = IdentityTable(Self.keys.enumerated().map { ($1, $0) })
        for (index, key) in Self.keys.enumerated() {
            #expect(Array(key.utf8).withUnsafeBytes { table.value(for: $0) } == index, "\(key)")
            #expect(table.value(for: key) == index, "\(key) as text")
        }
        for absent in ["ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:9:500", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:9:",
                       "mac:c4:7c:8d:6a:2b:03", String(repeating: "x", count: 41), "", "node:badge-10"] {
            #expect(Array(absent.utf8).withUnsafeBytes { table.value(for: $0) } == nil, "\(absent)")
            #expect(table.value(for: absent) == nil, "\(absent) as text")
        }
    }

    @Test func ofAKeyGivenTwiceTheLaterValueStands() {
        let table = IdentityTable([("node:a", 1), ("node:b", 2), ("node:a", 3)])
        #expect(table.value(for: "node:a") == 3)
        #expect(table.value(for: "node:b") == 2)
    }

    @Test func anEmptyTableFindsNothing() {
        let table = IdentityTable<Int>([])
        #expect(Array("node:a".utf8).withUnsafeBytes { table.value(for: $0) } == nil)
    }
}
