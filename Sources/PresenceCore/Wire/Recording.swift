/// The lines of a `presencectl record` file: each message the aggregator reads (SightingBatches,
/// and the nodes' status and stats) exactly as published, with two members put in front,
/// `received` (arrival time, ms since the epoch) and `topic`, so that a replay sees the same
/// arrivals as the live aggregator did. Decoders ignore the extra members.
public enum Recording {
    /// The line for `payload` received on `topic` at `received` (no trailing newline), or nil
    /// when the payload is not a JSON object and so cannot carry the arrival.
    public static func line(payload: [UInt8], topic: String, received: Int64) -> [UInt8]? {
        var start = 0
        while start < payload.count, [0x20, 0x09, 0x0A, 0x0D].contains(payload[start]) { start += 1 }
        guard start < payload.count, payload[start] == UInt8(ascii: "{") else { return nil }
        var rest = start + 1
        while rest < payload.count, [0x20, 0x09, 0x0A, 0x0D].contains(payload[rest]) { rest += 1 }
        var head = JSONWriter()
        head.object { w in
            w.member("received", received)
            w.member("topic", topic)
        }
        var line = head.bytes
        line.removeLast()
        if rest < payload.count, payload[rest] != UInt8(ascii: "}") { line.append(UInt8(ascii: ",")) }
        line.reserveCapacity(line.count + payload.count - rest)
        for byte in payload[rest...] {
            line.append(byte == 0x0A || byte == 0x0D ? 0x20 : byte)
        }
        return line
    }

    /// The arrival time and topic of a recorded line; nil if the line does not carry them.
    public static func arrival(of line: UnsafeRawBufferPointer) -> (received: Int64, topic: String)? {
        var reader = JSONReader(line)
        var received: Int64?
        var topic: String?
        do throws(JSONReader.Failure) {
            guard try reader.peekKind() == .object else { return nil }
            try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
                if key.is("received"), try reader.peekKind() == .number {
                    received = try reader.readInteger()
                } else if key.is("topic"), try reader.peekKind() == .string {
                    topic = try reader.readString()
                } else {
                    try reader.skipValue()
                }
            }
        } catch {
            return nil
        }
        guard let received, let topic else { return nil }
        return (received, topic)
    }
}
