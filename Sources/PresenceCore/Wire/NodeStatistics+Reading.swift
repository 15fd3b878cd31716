extension NodeStatistics {
    /// The `reports_per_s` a node's stats payload states (a finite number, not negative), or nil
    /// when the payload is not such an object: the one figure of a node's stats that the
    /// aggregator's fleet health shows.
    public static func reportsPerSecond(in payload: UnsafeRawBufferPointer) -> Double? {
        guard payload.count <= 65_536 else { return nil }
        var reader = JSONReader(payload)
        var rate: Double?
        do throws(JSONReader.Failure) {
            guard try reader.peekKind() == .object else { return nil }
            try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
                if key.is("reports_per_s"), try reader.peekKind() == .number {
                    let value = try reader.readDouble()
                    rate = value >= 0 ? value : nil
                } else {
                    try reader.skipValue()
                }
            }
            try reader.expectEnd()
        } catch {
            return nil
        }
        return rate
    }
}
