import Testing
@testable import PresenceCore

/// SipHash-2-4 against the reference vectors and the address pseudonyms built on it.
@Suite struct SipHashTests {
    /// From the reference implementation's vectors.h (veorq/SipHash, CC0): key 00 01 … 0f, message
    /// 00 01 … (n−1); the output bytes as the reference writes them, least significant first.
    @Test(arguments: [
        (0, [0x31, 0x0E, 0x0E, 0xDD, 0x47, 0xDB, 0x6F, 0x72]),
        (1, [0xFD, 0x67, 0xDC, 0x93, 0xC5, 0x39, 0xF8, 0x74]),
        (7, [0x37, 0xD1, 0x01, 0x8B, 0xF5, 0x00, 0x02, 0xAB]),
        (8, [0x62, 0x24, 0x93, 0x9A, 0x79, 0xF5, 0xF5, 0x93]),
        (15, [0xE5, 0x45, 0xBE, 0x49, 0x61, 0xCA, 0x29, 0xA1]),
        (63, [0x72, 0x45, 0x06, 0xEB, 0x4C, 0x32, 0x8A, 0x95]),
    ] as [(Int, [UInt8])])
    func referenceVectors(_ length: Int, _ expected: [UInt8]) throws {
        let key = try #require(SipHash24.Key(bytes: Array(0 ..< 16)))
        let hash = SipHash24.hash((0 ..< length).map { UInt8($0) }, key: key)
        #expect((0 ..< 8).map { UInt8(truncatingIfNeeded: hash >> (8 * $0)) } == expected)
    }

    @Test func pseudonymsAreStableForAKeyAndDifferAcrossKeys() {
        let address = BluetoothAddress(rawValue: 0xC47C_8D6A_2B01)
        let one = AddressHasher(secret: "venue secret one")
        #expect(one.pseudonym(for: address) == AddressHasher(secret: "venue secret one").pseudonym(for: address))
        #expect(one.pseudonym(for: address) != AddressHasher(secret: "venue secret two").pseudonym(for: address))
        #expect(one.pseudonym(for: address) != one.pseudonym(for: BluetoothAddress(rawValue: 0xC47C_8D6A_2B02)))
        #expect(one.pseudonym(for: address) != address)
    }

    @Test func pseudonymsLookLikeRandomStaticAddresses() throws {
        let hasher = AddressHasher(key: SipHash24.Key(k0: 1, k1: 2))
        for raw in [UInt64(0), 1, 0xFFFF_FFFF_FFFF, 0x4000_0000_0000] {
            let pseudonym = hasher.pseudonym(for: BluetoothAddress(rawValue: raw))
            #expect(AddressType(typeByte: 1, address: pseudonym) == .randomStatic)
            #expect(try Identity(parsing: "mac:\(pseudonym)").kind == .mac)
        }
    }

    @Test func thePseudonymIsTheHashOfTheDisplayedBytes() {
        let key = SipHash24.Key(k0: 0x0706_0504_0302_0100, k1: 0x0F0E_0D0C_0B0A_0908)
        // Key 00..0f, message 00 01 02 03 04 05: vector 6 is ce e3 fe 58 6e 46 c9 cb (top bits already 11).
        let pseudonym = AddressHasher(key: key).pseudonym(for: BluetoothAddress(rawValue: 0x0001_0203_0405))
        #expect(pseudonym.description == "ce:e3:fe:58:6e:46")
    }

    @Test func keysComeFromSecretsAndBytes() {
        #expect(SipHash24.Key(bytes: [1, 2, 3]) == nil)
        #expect(SipHash24.Key(bytes: Array(0 ..< 16)) == SipHash24.Key(k0: 0x0706_0504_0302_0100, k1: 0x0F0E_0D0C_0B0A_0908))
        #expect(SipHash24.Key(secret: "a") != SipHash24.Key(secret: "b"))
        let derived = SipHash24.Key(secret: "a")
        #expect(derived.k0 != derived.k1)
    }
}
