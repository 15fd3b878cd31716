/// One AD structure of advertising data (`[length][type][length - 1 bytes]`): its type and data.
public struct ADStructure: Equatable, Sendable {
    /// The AD type, such as 0xFF (manufacturer specific) or 0x16 (service data, 16-bit UUID).
    public let type: UInt8
    /// The bytes after the type, as a slice of the advertising data.
    public let data: ArraySlice<UInt8>

    /// AD types this code reads.
    public enum Types {
        public static let flags: UInt8 = 0x01
        public static let incompleteServiceUUIDs16: UInt8 = 0x02
        public static let completeServiceUUIDs16: UInt8 = 0x03
        public static let shortenedLocalName: UInt8 = 0x08
        public static let completeLocalName: UInt8 = 0x09
        public static let txPowerLevel: UInt8 = 0x0A
        public static let serviceData16: UInt8 = 0x16
        public static let manufacturerSpecific: UInt8 = 0xFF
    }
}

/// The AD structures in advertising data, in order. A length byte of 0 ends the walk (padding, as
/// Android and some controllers append); a structure whose length runs past the end is truncated
/// and ends the walk too, and `isTruncated` tells so. Never reads outside the data.
public struct ADStructures: Sequence, IteratorProtocol {
    private let bytes: ArraySlice<UInt8>
    private var position: Int
    /// Whether the walk stopped at a structure that runs past the end of the data.
    public private(set) var isTruncated = false

    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.position = bytes.startIndex
    }

    public init(_ bytes: [UInt8]) {
        self.init(bytes[...])
    }

    public mutating func next() -> ADStructure? {
        guard position < bytes.endIndex else { return nil }
        let length = Int(bytes[position])
        guard length > 0 else {
            position = bytes.endIndex
            return nil
        }
        guard length < bytes.endIndex - position else {
            isTruncated = true
            position = bytes.endIndex
            return nil
        }
        let type = bytes[position + 1]
        let data = bytes[position + 2 ..< position + 1 + length]
        position += 1 + length
        return ADStructure(type: type, data: data)
    }
}
