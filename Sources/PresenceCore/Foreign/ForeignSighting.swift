/// What a foreign node's report (`ESPresenseReport`, `GatewayAdvertisement`) says of one
/// advertiser, besides its canonical identity: the received strength and, when the report states
/// it, the advertiser's power at 1 m.
public struct ForeignSighting: Sendable, Equatable {
    /// dBm, in the contract's [-127, 20].
    public var rssi: Int
    /// The power at 1 m the report states (ESPresense's `rssi@1m`, a gateway's iBeacon `txpower`
    /// or 0 m figure less 41 dB), dBm; nil when it states none.
    public var tx: Int?

    public init(rssi: Int, tx: Int?) {
        self.rssi = rssi
        self.tx = tx
    }

    /// The largest foreign report taken, in bytes (they are a few hundred).
    public static let maximumBytes = 4_096

    /// The contract's range of a received strength, dBm.
    static let rssiRange: ClosedRange<Double> = -127 ... 20
}

/// Why a foreign report was dropped; `reason` names the counter it adds to.
public enum ForeignRejection: Error, Sendable, Equatable, CustomStringConvertible {
    case tooLarge(bytes: Int)
    case notJSON(JSONReader.Failure)
    /// No identity field (`id`).
    case noIdentity
    /// An identity in none of the forms this dialect writes.
    case badIdentity
    case noRSSI
    /// An `rssi` that is not a number within [-127, 20] dBm.
    case badRSSI

    public var reason: String {
        switch self {
        case .tooLarge: "too_large"
        case .notJSON: "not_json"
        case .noIdentity: "no_id"
        case .badIdentity: "bad_id"
        case .noRSSI: "no_rssi"
        case .badRSSI: "bad_rssi"
        }
    }

    public var description: String {
        switch self {
        case .tooLarge(let bytes): "report of \(bytes) bytes exceeds \(ForeignSighting.maximumBytes)"
        case .notJSON(let failure): "not a JSON object: \(failure)"
        case .noIdentity: "no 'id'"
        case .badIdentity: "an 'id' of no known form"
        case .noRSSI: "no 'rssi'"
        case .badRSSI: "'rssi' is not a number from -127 to 20"
        }
    }
}

extension JSONReader {
    /// Reads a number as a whole dBm figure within `range`, rounding a fraction; nil for another
    /// kind of value (skipped) or a number outside `range`.
    mutating func readDecibels(within range: ClosedRange<Double>) throws(Failure) -> Int? {
        guard try peekKind() == .number else {
            try skipValueAllowingNonFinite()
            return nil
        }
        if let whole = attempt({ (reader: inout JSONReader) throws(Failure) in try reader.readInteger() }) {
            return range.contains(Double(whole)) ? Int(whole) : nil
        }
        let value = try readDouble()
        return range.contains(value) ? Int(value.rounded()) : nil
    }
}

extension TextSpan {
    /// Calls `body` with the string's bytes, where they lie in `document` or from its text.
    func withBytes<R>(in document: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch self {
        case .bytes(let range):
            return body(UnsafeRawBufferPointer(rebasing: document[range]))
        case .text(let text):
            var copy = text
            return copy.withUTF8 { body(UnsafeRawBufferPointer($0)) }
        }
    }
}
