/// One HCI event packet read from an adapter (the bytes after the H4 type byte: event code,
/// length, parameters), with the time it was read. An empty packet marks 100 ms without any, so
/// that a consumer can close its batches on time when nothing is heard.
public struct HCIPacket: Sendable, Equatable {
    public var bytes: [UInt8]
    /// When it was read, ms since the Unix epoch.
    public var time: Int64

    public init(bytes: [UInt8], time: Int64) {
        self.bytes = bytes
        self.time = time
    }
}
