/// Up to 20 bytes held inline, without a heap allocation: the variable parts of Eddystone frames
/// (an encoded URL, encrypted telemetry).
public struct ShortBytes: Hashable, Sendable, CustomStringConvertible {
    /// The most bytes a value holds.
    public static let capacity = 20

    private var storage = InlineArray<20, UInt8>(repeating: 0)
    /// How many bytes are held.
    public private(set) var count = 0

    /// The first `capacity` bytes of `span[range]`.
    init(_ span: Span<UInt8>, _ range: Range<Int>) {
        for index in range.prefix(ShortBytes.capacity) {
            storage[count] = span[index]
            count += 1
        }
    }

    /// The first `capacity` bytes of `bytes`.
    public init(_ bytes: some Sequence<UInt8>) {
        for byte in bytes.prefix(ShortBytes.capacity) {
            storage[count] = byte
            count += 1
        }
    }

    public subscript(index: Int) -> UInt8 {
        precondition(index >= 0 && index < count, "ShortBytes index out of range")
        return storage[index]
    }

    /// The bytes, as an array.
    public var bytes: [UInt8] { (0 ..< count).map { storage[$0] } }

    /// The bytes in lower-case hex.
    public var description: String {
        var text = ASCIIText()
        for index in 0 ..< count { text.appendHex(UInt128(storage[index]), digits: 2) }
        return text.string
    }

    public static func == (lhs: ShortBytes, rhs: ShortBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for index in 0 ..< lhs.count where lhs.storage[index] != rhs.storage[index] { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for index in 0 ..< count { hasher.combine(storage[index]) }
    }
}
