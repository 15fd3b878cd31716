/// Writes a btsnoop capture into memory, for tests, fixtures and tools: the header, then records.
/// HCI packets are given from their first byte after the H4 indicator; the writer adds the
/// indicator (1002) or the flags (1001, 2001) their datalink wants.
public struct BTSnoopWriter: Sendable {
    public let datalink: BTSnoopDatalink
    /// The capture so far.
    public private(set) var bytes: [UInt8]

    public init(datalink: BTSnoopDatalink) {
        self.datalink = datalink
        bytes = BTSnoop.magic
        append32(BTSnoop.version)
        append32(datalink.rawValue)
    }

    /// Appends one record as given. `originalLength` defaults to the data's length.
    public mutating func appendRecord(_ data: [UInt8], flags: UInt32, unixMicroseconds: Int64, originalLength: UInt32? = nil, cumulativeDrops: UInt32 = 0) {
        append32(originalLength ?? UInt32(truncatingIfNeeded: data.count))
        append32(UInt32(truncatingIfNeeded: data.count))
        append32(flags)
        append32(cumulativeDrops)
        let timestamp = UInt64(bitPattern: unixMicroseconds &+ BTSnoop.unixEpochOffset)
        append32(UInt32(truncatingIfNeeded: timestamp >> 32))
        append32(UInt32(truncatingIfNeeded: timestamp))
        bytes.append(contentsOf: data)
    }

    /// Appends an HCI event received from the controller (`event` starts with the event code).
    public mutating func appendEvent(_ event: [UInt8], unixMicroseconds: Int64, controllerIndex: UInt16 = 0) {
        appendHCI(event, indicator: BTSnoop.H4.event, opcode: BTSnoop.MonitorOpcode.event, received: true, unixMicroseconds: unixMicroseconds, controllerIndex: controllerIndex)
    }

    /// Appends an HCI command sent to the controller (`command` starts with the opcode).
    public mutating func appendCommand(_ command: [UInt8], unixMicroseconds: Int64, controllerIndex: UInt16 = 0) {
        appendHCI(command, indicator: BTSnoop.H4.command, opcode: BTSnoop.MonitorOpcode.command, received: false, unixMicroseconds: unixMicroseconds, controllerIndex: controllerIndex)
    }

    /// Appends a BlueZ monitor record of any opcode (new index, system note, …); datalink 2001 only.
    public mutating func appendMonitor(opcode: UInt16, controllerIndex: UInt16, data: [UInt8], unixMicroseconds: Int64) {
        precondition(datalink == .monitor, "monitor records belong in datalink 2001 captures")
        appendRecord(data, flags: UInt32(controllerIndex) << 16 | UInt32(opcode), unixMicroseconds: unixMicroseconds)
    }

    private mutating func appendHCI(_ packet: [UInt8], indicator: UInt8, opcode: UInt16, received: Bool, unixMicroseconds: Int64, controllerIndex: UInt16) {
        let direction: UInt32 = received ? 1 : 0
        switch datalink {
        case .h4:
            appendRecord([indicator] + packet, flags: 0b10 | direction, unixMicroseconds: unixMicroseconds)
        case .monitor:
            appendRecord(packet, flags: UInt32(controllerIndex) << 16 | UInt32(opcode), unixMicroseconds: unixMicroseconds)
        default:
            appendRecord(packet, flags: 0b10 | direction, unixMicroseconds: unixMicroseconds)
        }
    }

    private mutating func append32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }
}
