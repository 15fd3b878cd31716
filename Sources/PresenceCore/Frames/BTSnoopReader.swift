/// Reads a btsnoop capture from its bytes, record by record. A final record that the file cuts short
/// ends the reading and is reported in `truncation`; nothing is read outside the bytes.
public struct BTSnoopReader: Sendable {
    private let bytes: [UInt8]
    private var position = BTSnoop.headerLength
    public let datalink: BTSnoopDatalink
    /// Set when the reader stopped at a record that the file cuts short.
    public private(set) var truncation: BTSnoopTruncation?

    /// Checks the header: the magic, version 1. Any datalink is accepted; `nextHCIEvent` knows 1001,
    /// 1002 and 2001.
    public init(_ bytes: [UInt8]) throws(BTSnoopError) {
        guard bytes.count >= BTSnoop.headerLength else {
            throw BTSnoopError("not a btsnoop file: \(bytes.count) bytes, shorter than the 16-byte header")
        }
        guard bytes.starts(with: BTSnoop.magic) else {
            throw BTSnoopError("not a btsnoop file: it does not start with \"btsnoop\\0\"")
        }
        let span = bytes.span
        let version = span.uint32BigEndian(at: 8)
        guard version == BTSnoop.version else {
            throw BTSnoopError("btsnoop version \(version) is not supported (expected 1)")
        }
        self.bytes = bytes
        datalink = BTSnoopDatalink(rawValue: span.uint32BigEndian(at: 12))
    }

    /// The next record, or nil at the end of the file or at a truncated final record.
    public mutating func next() -> BTSnoopRecord? {
        let bytes = self.bytes
        let available = bytes.count - position
        guard available > 0, truncation == nil else { return nil }
        guard available >= BTSnoop.recordHeaderLength else {
            return stop(needing: BTSnoop.recordHeaderLength, available: available)
        }
        let span = bytes.span
        let included = Int(span.uint32BigEndian(at: position + 4))
        guard included <= available - BTSnoop.recordHeaderLength else {
            return stop(needing: BTSnoop.recordHeaderLength + included, available: available)
        }
        let start = position + BTSnoop.recordHeaderLength
        let record = BTSnoopRecord(
            originalLength: span.uint32BigEndian(at: position),
            flags: span.uint32BigEndian(at: position + 8),
            cumulativeDrops: span.uint32BigEndian(at: position + 12),
            timestamp: Int64(bitPattern: span.uint64BigEndian(at: position + 16)),
            data: bytes[start ..< start + included])
        position = start + included
        return record
    }

    private mutating func stop(needing needed: Int, available: Int) -> BTSnoopRecord? {
        truncation = BTSnoopTruncation(offset: position, needed: needed, available: available)
        position = bytes.count
        return nil
    }

    /// The next HCI event, skipping commands, ACL/SCO/ISO data, notes and index records:
    /// 1001 records flagged received command-or-event, 1002 records led by the 0x04 indicator,
    /// 2001 records with opcode 3 (from any controller; filter on `controllerIndex`).
    public mutating func nextHCIEvent() -> BTSnoopHCIEvent? {
        while let record = next() {
            if let event = BTSnoopReader.event(in: record, datalink: datalink) { return event }
        }
        return nil
    }

    private static func event(in record: BTSnoopRecord, datalink: BTSnoopDatalink) -> BTSnoopHCIEvent? {
        let time = record.unixMicroseconds
        switch datalink {
        case .h1:
            guard record.flags & 0b11 == 0b11 else { return nil }
            return BTSnoopHCIEvent(unixMicroseconds: time, controllerIndex: 0, packet: record.data)
        case .h4:
            guard record.data.first == BTSnoop.H4.event else { return nil }
            return BTSnoopHCIEvent(unixMicroseconds: time, controllerIndex: 0, packet: record.data.dropFirst())
        case .monitor:
            guard UInt16(truncatingIfNeeded: record.flags) == BTSnoop.MonitorOpcode.event else { return nil }
            return BTSnoopHCIEvent(unixMicroseconds: time, controllerIndex: UInt16(truncatingIfNeeded: record.flags >> 16), packet: record.data)
        default:
            return nil
        }
    }
}
