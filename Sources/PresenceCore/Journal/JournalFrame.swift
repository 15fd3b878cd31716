/// How records lie in the journal's files: `[u32 body length][u32 CRC-32C of the body][body]`,
/// little-endian. A frame cut short or failing its checksum ends what can be read: a crash tore
/// the write there, and what follows is not trusted.
public enum JournalFrame {
    public static let headerSize = 8
    /// Larger bodies are refused on writing and taken for damage on reading.
    public static let maximumBody = 256 << 20

    /// A frame read back: where it starts (from the start of the bytes scanned) and its body.
    public struct Read {
        public var offset: Int
        public var body: ArraySlice<UInt8>
    }

    /// `body` framed.
    public static func frame(_ body: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerSize + body.count)
        withUnsafeBytes(of: UInt32(body.count).littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: CRC32C.checksum(body).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: body)
        return bytes
    }

    /// The frames in `bytes` from its start, up to the end or the first frame that is cut short,
    /// too large or fails its checksum; `end` is where the good frames end (the torn tail, if any,
    /// starts there).
    public static func scan(_ bytes: ArraySlice<UInt8>) -> (frames: [Read], end: Int, torn: Bool) {
        var frames: [Read] = []
        var position = bytes.startIndex
        while position < bytes.endIndex {
            guard bytes.endIndex - position >= headerSize else { return (frames, position - bytes.startIndex, true) }
            let length = Int(word(bytes, at: position))
            let checksum = word(bytes, at: position + 4)
            let start = position + headerSize
            guard length <= maximumBody, bytes.endIndex - start >= length else { return (frames, position - bytes.startIndex, true) }
            let body = bytes[start ..< start + length]
            guard CRC32C.checksum(body) == checksum else { return (frames, position - bytes.startIndex, true) }
            frames.append(Read(offset: position - bytes.startIndex, body: body))
            position = start + length
        }
        return (frames, position - bytes.startIndex, false)
    }

    private static func word(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt32 {
        (0 ..< 4).reduce(UInt32(0)) { $0 | UInt32(bytes[index + $1]) << (8 * UInt32($1)) }
    }
}
