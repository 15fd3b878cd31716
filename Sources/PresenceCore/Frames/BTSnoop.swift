/// The btsnoop capture format (Frontline/Teledyne; what Android's `btsnoop_hci.log` and BlueZ's
/// `btmon -w` write): a 16-byte header (`btsnoop\0`, version 1, datalink), then records of a 24-byte
/// header and the packet. Everything is big-endian.
public enum BTSnoop {
    /// The file's first eight bytes.
    public static let magic: [UInt8] = Array("btsnoop\0".utf8)
    public static let version: UInt32 = 1
    public static let headerLength = 16
    public static let recordHeaderLength = 24
    /// Microseconds from 0000-01-01 00:00 (proleptic Gregorian), btsnoop's epoch, to the Unix epoch.
    public static let unixEpochOffset: Int64 = 0x00DC_DDB3_0F2F_8000

    /// BlueZ monitor opcodes (datalink 2001), the low 16 bits of a record's flags.
    public enum MonitorOpcode {
        public static let newIndex: UInt16 = 0
        public static let deleteIndex: UInt16 = 1
        public static let command: UInt16 = 2
        public static let event: UInt16 = 3
        public static let aclTX: UInt16 = 4
        public static let aclRX: UInt16 = 5
        public static let openIndex: UInt16 = 8
        public static let indexInfo: UInt16 = 10
        public static let systemNote: UInt16 = 12
    }

    /// H4 packet indicators (datalink 1002 puts one before each packet).
    public enum H4 {
        public static let command: UInt8 = 0x01
        public static let acl: UInt8 = 0x02
        public static let sco: UInt8 = 0x03
        public static let event: UInt8 = 0x04
        public static let iso: UInt8 = 0x05
    }
}

/// What a btsnoop file's records hold, from its header.
public struct BTSnoopDatalink: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// HCI packets without a type byte; the flags tell commands, events and data apart.
    public static let h1 = BTSnoopDatalink(rawValue: 1001)
    /// HCI packets led by their H4 indicator byte, as Android writes them.
    public static let h4 = BTSnoopDatalink(rawValue: 1002)
    /// BlueZ monitor: packets without a type byte, `flags = (controller index << 16) | opcode`.
    public static let monitor = BTSnoopDatalink(rawValue: 2001)
}

/// One btsnoop record.
public struct BTSnoopRecord: Equatable, Sendable {
    /// The packet's length on the wire; more than `data.count` when the capture cut it.
    public var originalLength: UInt32
    public var flags: UInt32
    /// Packets lost before this one, counted from the capture's start.
    public var cumulativeDrops: UInt32
    /// Microseconds since 0000-01-01, as stored.
    public var timestamp: Int64
    /// The packet bytes the file holds (`included_len` of them).
    public var data: ArraySlice<UInt8>

    public init(originalLength: UInt32, flags: UInt32, cumulativeDrops: UInt32, timestamp: Int64, data: ArraySlice<UInt8>) {
        self.originalLength = originalLength
        self.flags = flags
        self.cumulativeDrops = cumulativeDrops
        self.timestamp = timestamp
        self.data = data
    }

    /// Microseconds since the Unix epoch.
    public var unixMicroseconds: Int64 { timestamp &- BTSnoop.unixEpochOffset }
}

/// An HCI event found in a capture: the packet from its event code on, and when it was captured.
public struct BTSnoopHCIEvent: Equatable, Sendable {
    public var unixMicroseconds: Int64
    /// The controller index (monitor captures; 0 otherwise).
    public var controllerIndex: UInt16
    public var packet: ArraySlice<UInt8>

    public init(unixMicroseconds: Int64, controllerIndex: UInt16, packet: ArraySlice<UInt8>) {
        self.unixMicroseconds = unixMicroseconds
        self.controllerIndex = controllerIndex
        self.packet = packet
    }
}

/// Why a btsnoop file could not be read at all.
public struct BTSnoopError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The final record of a capture that stops before its end (a capture still being written, or cut).
public struct BTSnoopTruncation: Equatable, Sendable {
    /// Where the record starts in the file.
    public var offset: Int
    /// Bytes the record needs (header and packet, as far as its header could be read).
    public var needed: Int
    /// Bytes the file still has from `offset`.
    public var available: Int
}
