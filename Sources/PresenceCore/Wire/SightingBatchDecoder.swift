/// Decodes and validates SightingBatch payloads by the contract's rules: a batch that is not valid
/// JSON, lacks a required field, exceeds the bounds or names another node is rejected whole; a
/// sighting with a missing or out-of-range value is dropped alone and the rest are kept.
public enum SightingBatchDecoder {
    /// Why a whole batch was rejected.
    public enum Rejection: Error, Equatable, Sendable, CustomStringConvertible {
        case tooLarge(bytes: Int)
        case notJSON(String)
        case notAnObject
        case missingField(String)
        case badField(String)
        case unsupportedVersion(Int64)
        case wrongNode(String)
        case tooManySightings
        /// `sent` lies this far after the batch's arrival (set by the pipeline, not the decoder).
        case sentAhead(milliseconds: Int64)

        /// A short stable name, for counters and logs.
        public var reason: String {
            switch self {
            case .tooLarge: "too_large"
            case .notJSON: "not_json"
            case .notAnObject: "not_an_object"
            case .missingField: "missing_field"
            case .badField: "bad_field"
            case .unsupportedVersion: "unsupported_version"
            case .wrongNode: "wrong_node"
            case .tooManySightings: "too_many_sightings"
            case .sentAhead: "sent_ahead"
            }
        }

        public var description: String {
            switch self {
            case .tooLarge(let bytes): "batch of \(bytes) bytes exceeds \(SightingLimits.maximumBytes)"
            case .notJSON(let why): "not valid JSON: \(why)"
            case .notAnObject: "not a JSON object"
            case .missingField(let name): "required field '\(name)' is missing"
            case .badField(let name): "field '\(name)' has the wrong type or range"
            case .unsupportedVersion(let v): "version \(v) is not supported (expected 1)"
            case .wrongNode(let node): "batch names node '\(node)', not the topic's node"
            case .tooManySightings: "more than \(SightingLimits.maximumSightings) sightings"
            case .sentAhead(let milliseconds): "sent \(milliseconds / 1000) s after its arrival: the node's clock is fast, or the batch forged"
            }
        }
    }

    /// A decoded batch with the number of sightings dropped from it.
    public struct Decoded: Equatable, Sendable {
        public var batch: SightingBatch
        public var droppedSightings: Int
    }

    /// A batch's header fields and how many of its sightings were dropped.
    public struct Header: Equatable, Sendable {
        public var node: String
        public var seq: Int64
        public var sent: Int64
        public var droppedSightings: Int
    }

    /// A valid sighting as scanned, its text fields still in the payload.
    public struct Scanned: Sendable, Equatable {
        public var ts: Int64
        public var id: TextSpan
        public var rssi: Int
        public var tx: Int?
        public var addr: TextSpan?
        /// Where the sighting's telemetry (Eddystone TLM, rare beside sightings) starts in the
        /// payload, or -1 when it has none. Kept as an offset, not a `Telemetry`, so that a scanned
        /// sighting stays small: the aggregator copies every one of them.
        var telemetryOffset: Int32 = -1

        /// The telemetry the node heard from the same advertiser, read again from `payload` (the one
        /// this sighting was scanned from), or nil.
        public func telemetry(in payload: UnsafeRawBufferPointer) -> Telemetry? {
            guard telemetryOffset >= 0, Int(telemetryOffset) < payload.count else { return nil }
            var reader = JSONReader(UnsafeRawBufferPointer(rebasing: payload[Int(telemetryOffset)...]))
            return (try? TelemetryReader.read(&reader)) ?? nil
        }
    }

    /// Decodes `payload` published on the topic of `topicNode`.
    public static func decode(_ payload: [UInt8], topicNode: String) -> Result<Decoded, Rejection> {
        payload.withUnsafeBytes { bytes in
            var scanned: [Scanned] = []
            return scan(bytes, topicNode: topicNode, into: &scanned).map { header in
                let sightings = scanned.map { s in
                    Sighting(ts: s.ts, id: s.id.string(in: bytes), rssi: s.rssi, tx: s.tx, addr: s.addr?.string(in: bytes), telemetry: s.telemetry(in: bytes))
                }
                return Decoded(batch: SightingBatch(node: header.node, seq: header.seq, sent: header.sent, sightings: sightings),
                               droppedSightings: header.droppedSightings)
            }
        }
    }

    /// Validates `payload` and appends its valid sightings to `sightings` (emptied first) without
    /// copying their text: the hot path of the aggregator, which looks identities up by their bytes.
    public static func scan(_ payload: UnsafeRawBufferPointer, topicNode: String, into sightings: inout [Scanned]) -> Result<Header, Rejection> {
        sightings.removeAll(keepingCapacity: true)
        guard payload.count <= SightingLimits.maximumBytes else { return .failure(.tooLarge(bytes: payload.count)) }
        var reader = JSONReader(payload)
        var fields = Fields()
        do throws(JSONReader.Failure) {
            guard try reader.peekKind() == .object else {
                try reader.skipValue()
                try reader.expectEnd()
                return .failure(.notAnObject)
            }
            try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
                if key.is("v") {
                    fields.version = try readInteger(&reader)
                    if fields.version == nil { fields.rejection = fields.rejection ?? .badField("v") }
                } else if key.is("node") {
                    fields.node = try readString(&reader)
                    if fields.node == nil { fields.rejection = fields.rejection ?? .badField("node") }
                } else if key.is("seq") {
                    fields.seq = try readInteger(&reader)
                    if fields.seq.map({ $0 < 0 }) ?? true { fields.rejection = fields.rejection ?? .badField("seq") }
                } else if key.is("sent") {
                    fields.sent = try readInteger(&reader)
                    if !(fields.sent.map(SightingLimits.timestampRange.contains) ?? false) {
                        fields.rejection = fields.rejection ?? .badField("sent")
                    }
                } else if key.is("sightings") {
                    guard try reader.peekKind() == .array else {
                        try reader.skipValue()
                        fields.rejection = fields.rejection ?? .badField("sightings")
                        return
                    }
                    sightings.removeAll(keepingCapacity: true)
                    var dropped = 0
                    var count = 0
                    try reader.readArray { (reader: inout JSONReader) throws(JSONReader.Failure) in
                        count += 1
                        if count > SightingLimits.maximumSightings {
                            try reader.skipValue()
                            return
                        }
                        if let sighting = try readSighting(&reader, in: payload) {
                            sightings.append(sighting)
                        } else {
                            dropped += 1
                        }
                    }
                    if count > SightingLimits.maximumSightings { fields.rejection = fields.rejection ?? .tooManySightings }
                    fields.hasSightings = true
                    fields.dropped = dropped
                } else {
                    try reader.skipValue()
                }
            }
            try reader.expectEnd()
        } catch {
            return .failure(.notJSON(error.description))
        }
        if let rejection = fields.rejection { return .failure(rejection) }
        guard let version = fields.version else { return .failure(.missingField("v")) }
        guard version == 1 else { return .failure(.unsupportedVersion(version)) }
        guard let node = fields.node else { return .failure(.missingField("node")) }
        guard node == topicNode else { return .failure(.wrongNode(node)) }
        guard let seq = fields.seq else { return .failure(.missingField("seq")) }
        guard let sent = fields.sent else { return .failure(.missingField("sent")) }
        guard fields.hasSightings else { return .failure(.missingField("sightings")) }
        return .success(Header(node: node, seq: seq, sent: sent, droppedSightings: fields.dropped))
    }

    private struct Fields {
        var version: Int64?
        var node: String?
        var seq: Int64?
        var sent: Int64?
        var hasSightings = false
        var dropped = 0
        var rejection: Rejection?
    }

    /// An integer, or nil (the value skipped) when the value is of another type.
    private static func readInteger(_ reader: inout JSONReader) throws(JSONReader.Failure) -> Int64? {
        guard try reader.peekKind() == .number else {
            try reader.skipValue()
            return nil
        }
        return try reader.readInteger()
    }

    /// A string, or nil (the value skipped) when the value is of another type.
    private static func readString(_ reader: inout JSONReader) throws(JSONReader.Failure) -> String? {
        guard try reader.peekKind() == .string else {
            try reader.skipValue()
            return nil
        }
        return try reader.readString()
    }

    /// A string's span, or nil (the value skipped) when the value is of another type.
    private static func readSpan(_ reader: inout JSONReader) throws(JSONReader.Failure) -> TextSpan? {
        guard try reader.peekKind() == .string else {
            try reader.skipValue()
            return nil
        }
        return try reader.readStringSpan()
    }

    /// One sighting, or nil when it must be dropped (not an object, a value missing or out of range).
    private static func readSighting(_ reader: inout JSONReader, in payload: UnsafeRawBufferPointer) throws(JSONReader.Failure) -> Scanned? {
        if let fields = reader.attempt({ (reader: inout JSONReader) throws(JSONReader.Failure) in try readCompactSighting(&reader) }) {
            return fields.validated(in: payload)
        }
        return try readAnySighting(&reader)?.validated(in: payload)
    }

    /// A sighting as the scanner writes it: `{"ts":…,"id":"…","rssi":…}`, then `"tx"`, `"addr"` and
    /// `"tlm"` if present, in that order, with integers and plain strings; nil for any other layout,
    /// which `readAnySighting` reads instead, to the same result.
    private static func readCompactSighting(_ reader: inout JSONReader) throws(JSONReader.Failure) -> SightingFields? {
        var fields = SightingFields()
        guard reader.consume("{\"ts\":"), let ts = try reader.readInteger(),
              reader.consume(",\"id\":"), case .bytes(let id) = try reader.readStringSpan(),
              reader.consume(",\"rssi\":"), let rssi = try reader.readInteger() else { return nil }
        fields.ts = ts
        fields.id = .bytes(id)
        fields.rssi = rssi
        if reader.consume(",\"tx\":") {
            guard let tx = try reader.readInteger() else { return nil }
            fields.tx = tx
            fields.txPresent = true
        }
        if reader.consume(",\"addr\":") {
            guard case .bytes(let addr) = try reader.readStringSpan() else { return nil }
            fields.addr = .bytes(addr)
        }
        if reader.consume(",\"tlm\":") { try fields.readTelemetry(&reader) }
        return reader.consume("}") ? fields : nil
    }

    /// A sighting in any layout; nil when it is not an object.
    private static func readAnySighting(_ reader: inout JSONReader) throws(JSONReader.Failure) -> SightingFields? {
        guard try reader.peekKind() == .object else {
            try reader.skipValue()
            return nil
        }
        var fields = SightingFields()
        try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
            if key.is("ts") {
                fields.ts = try readInteger(&reader)
            } else if key.is("id") {
                fields.id = try readSpan(&reader)
            } else if key.is("rssi") {
                fields.rssi = try readInteger(&reader)
            } else if key.is("tx") {
                if try reader.readNull() { return }
                fields.txPresent = true
                fields.tx = try readInteger(&reader)
            } else if key.is("addr") {
                if try reader.readNull() { return }
                fields.addr = try readSpan(&reader)
                if fields.addr == nil { fields.addrIsValid = false }
            } else if key.is("tlm") {
                try fields.readTelemetry(&reader)
            } else {
                try reader.skipValue()
            }
        }
        return fields
    }

    /// A sighting's members as read, before the contract's checks.
    private struct SightingFields {
        var ts: Int64?
        var id: TextSpan?
        var rssi: Int64?
        var tx: Int64?
        var txPresent = false
        var addr: TextSpan?
        var addrIsValid = true
        /// Where a `tlm` that says something starts (-1: none).
        var telemetryOffset: Int32 = -1

        /// Reads the `tlm` value at the reader (checking it as the contract says) and keeps where it
        /// starts when it holds telemetry.
        mutating func readTelemetry(_ reader: inout JSONReader) throws(JSONReader.Failure) {
            reader.skipWhitespace()
            let start = reader.position
            telemetryOffset = try TelemetryReader.read(&reader) == nil ? -1 : Int32(clamping: start)
        }

        /// The sighting, or nil when a value is missing, of the wrong type or out of range.
        func validated(in payload: UnsafeRawBufferPointer) -> Scanned? {
            guard addrIsValid,
                  let ts, SightingLimits.timestampRange.contains(ts),
                  let id, (1 ... SightingLimits.maximumIdentityLength).contains(id.utf8Count(in: payload)),
                  let rssi, SightingLimits.rssiRange.contains(Int(clamping: rssi))
            else { return nil }
            if txPresent {
                guard let tx, SightingLimits.txRange.contains(Int(clamping: tx)) else { return nil }
            }
            return Scanned(ts: ts, id: id, rssi: Int(rssi), tx: tx.map { Int($0) }, addr: addr, telemetryOffset: telemetryOffset)
        }
    }
}
