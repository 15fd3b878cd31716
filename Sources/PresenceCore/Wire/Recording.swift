/// The lines of a `presencectl record` file: each message the aggregator reads (SightingBatches,
/// the nodes' status and stats, foreign nodes' reports) exactly as published, with two members put
/// in front, `received` (arrival time, ms since the epoch) and `topic`, so that a replay sees the
/// same arrivals as the live aggregator did. Decoders ignore the extra members. A payload that is
/// not a JSON object (a foreign node's `online` or `offline`) is kept as a string, alone beside
/// them: `{"received":…,"topic":"…","text":"offline"}`.
public enum Recording {
    /// The line for `payload` received on `topic` at `received` (no trailing newline), or nil
    /// when the payload is neither a JSON object nor UTF-8 text.
    public static func line(payload: [UInt8], topic: String, received: Int64) -> [UInt8]? {
        var start = 0
        while start < payload.count, [0x20, 0x09, 0x0A, 0x0D].contains(payload[start]) { start += 1 }
        guard start < payload.count, payload[start] == UInt8(ascii: "{") else {
            guard let text = String(validating: payload, as: UTF8.self) else { return nil }
            var line = JSONWriter()
            line.object { w in
                w.member("received", received)
                w.member("topic", topic)
                w.member("text", text)
            }
            return line.bytes
        }
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

    /// The payload a line was written for when it was not a JSON object (the line's `text`, when
    /// its members are `received`, `topic` and `text` only); nil for a line that is the payload.
    public static func text(of line: UnsafeRawBufferPointer) -> [UInt8]? {
        // Only a line ending in a string can be one; most lines are not parsed twice.
        var end = line.count
        while end > 0, [0x20, 0x09, 0x0D].contains(line[end - 1]) { end -= 1 }
        guard end >= 2, line[end - 1] == UInt8(ascii: "}"), line[end - 2] == UInt8(ascii: "\"") else { return nil }
        var reader = JSONReader(line)
        var arrival = 0
        var others = false
        var text: String?
        do throws(JSONReader.Failure) {
            try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
                if key.is("text"), try reader.peekKind() == .string {
                    text = try reader.readString()
                    return
                }
                if key.is("received") || key.is("topic") { arrival += 1 } else { others = true }
                try reader.skipValue()
            }
            try reader.expectEnd()
        } catch {
            return nil
        }
        guard arrival == 2, !others, let text else { return nil }
        return Array(text.utf8)
    }

    /// The arrival time and topic of a recorded line; nil if the line does not carry them.
    /// Lines as `line(payload:topic:received:)` writes them are read from their first bytes only.
    public static func arrival(of line: UnsafeRawBufferPointer) -> (received: Int64, topic: String)? {
        if let quick = quickArrival(of: line) { return quick }
        return parsedArrival(of: line)
    }

    /// `{"received":<digits>,"topic":"<text without escapes>"` at the very start of the line.
    private static func quickArrival(of line: UnsafeRawBufferPointer) -> (received: Int64, topic: String)? {
        let head = Array("{\"received\":".utf8)
        let middle = Array(",\"topic\":\"".utf8)
        guard line.count > head.count + middle.count + 2, line.starts(with: head) else { return nil }
        var index = head.count
        var received: Int64 = 0
        let digitsStart = index
        while index < line.count, line[index] >= UInt8(ascii: "0"), line[index] <= UInt8(ascii: "9"), index - digitsStart < 18 {
            received = received * 10 + Int64(line[index] - UInt8(ascii: "0"))
            index += 1
        }
        guard index > digitsStart, index + middle.count < line.count,
              UnsafeRawBufferPointer(rebasing: line[index ..< index + middle.count]).elementsEqual(middle) else { return nil }
        index += middle.count
        let topicStart = index
        while index < line.count, line[index] != UInt8(ascii: "\""), line[index] != UInt8(ascii: "\\"), line[index] >= 0x20 {
            index += 1
        }
        guard index < line.count, line[index] == UInt8(ascii: "\""),
              let topic = String(validating: UnsafeRawBufferPointer(rebasing: line[topicStart ..< index]).bindMemory(to: UInt8.self), as: UTF8.self)
        else { return nil }
        return (received, topic)
    }

    private static func parsedArrival(of line: UnsafeRawBufferPointer) -> (received: Int64, topic: String)? {
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
