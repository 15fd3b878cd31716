/// Bounds-checked reads of the multi-byte fields that advertising formats use. Every read traps on
/// an out-of-range offset rather than reading past the data, so parsers check lengths first.
extension Span where Element == UInt8 {
    @inline(__always)
    func uint16BigEndian(at offset: Int) -> UInt16 {
        UInt16(bigEndian: bytes.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    @inline(__always)
    func uint16LittleEndian(at offset: Int) -> UInt16 {
        UInt16(littleEndian: bytes.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    @inline(__always)
    func uint32BigEndian(at offset: Int) -> UInt32 {
        UInt32(bigEndian: bytes.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    func uint64BigEndian(at offset: Int) -> UInt64 {
        UInt64(bigEndian: bytes.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The `count` bytes (at most 16) at `offset` as one big-endian number.
    @inline(__always)
    func uint128BigEndian(at offset: Int, count: Int) -> UInt128 {
        var value: UInt128 = 0
        for index in offset ..< offset + count {
            value = value << 8 | UInt128(self[index])
        }
        return value
    }

    /// A 16-byte big-endian field, read as two words.
    @inline(__always)
    func uint128BigEndian(at offset: Int) -> UInt128 {
        UInt128(uint64BigEndian(at: offset)) << 64 | UInt128(uint64BigEndian(at: offset + 8))
    }

    /// The `count` bytes (at most 8) at `offset` as one big-endian number.
    @inline(__always)
    func uint64BigEndian(at offset: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset ..< offset + count {
            value = value << 8 | UInt64(self[index])
        }
        return value
    }
}
