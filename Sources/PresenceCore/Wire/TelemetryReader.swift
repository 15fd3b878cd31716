/// Reads a sighting's `tlm` member as the scanner writes it (`{"batt":…,"temp":…,"adv":…,"up":…}`,
/// `"encrypted":true` for eTLM). Telemetry is an extra: a member of the wrong type or out of range
/// is left out, and a `tlm` that is not an object (or says nothing) is no telemetry, while the
/// sighting itself is kept.
enum TelemetryReader {
    /// The largest `up` an Eddystone TLM can state: SEC_CNT is 32 bits of 0.1 s.
    static let maximumUptime = Double(UInt32.max) / 10

    static func read(_ reader: inout JSONReader) throws(JSONReader.Failure) -> Telemetry? {
        guard try reader.peekKind() == .object else {
            try reader.skipValue()
            return nil
        }
        var telemetry = Telemetry()
        try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
            if key.is("batt") {
                // 0 mV means "not reported" in Eddystone TLM; the field is 16 bits.
                telemetry.batteryMillivolts = try integer(&reader).flatMap { (1 ... 65_535).contains($0) ? Int($0) : nil }
            } else if key.is("temp") {
                telemetry.temperature = try number(&reader).flatMap { abs($0) < 128 ? $0 : nil }
            } else if key.is("adv") {
                telemetry.advertisementCount = try integer(&reader).flatMap { UInt32(exactly: $0) }
            } else if key.is("up") {
                telemetry.uptime = try number(&reader).flatMap { (0 ... maximumUptime).contains($0) ? $0 : nil }
            } else if key.is("encrypted") {
                if try reader.peekKind() == .bool {
                    telemetry.encrypted = try reader.readBool()
                } else {
                    try reader.skipValue()
                }
            } else {
                try reader.skipValue()
            }
        }
        return telemetry == Telemetry() ? nil : telemetry
    }

    private static func integer(_ reader: inout JSONReader) throws(JSONReader.Failure) -> Int64? {
        guard try reader.peekKind() == .number else {
            try reader.skipValue()
            return nil
        }
        return try reader.readInteger()
    }

    private static func number(_ reader: inout JSONReader) throws(JSONReader.Failure) -> Double? {
        guard try reader.peekKind() == .number else {
            try reader.skipValue()
            return nil
        }
        return try reader.readDouble()
    }
}
