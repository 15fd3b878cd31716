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
            }
        }
    }

    /// A decoded batch with the number of sightings dropped from it.
    public struct Decoded: Equatable, Sendable {
        public var batch: SightingBatch
        public var droppedSightings: Int
    }

    /// Decodes `payload` published on the topic of `topicNode`.
    public static func decode(_ payload: [UInt8], topicNode: String) -> Result<Decoded, Rejection> {
        guard payload.count <= SightingLimits.maximumBytes else { return .failure(.tooLarge(bytes: payload.count)) }
        return payload.withUnsafeBytes { decode(bytes: $0, topicNode: topicNode) }
    }

    private struct Fields {
        var version: Int64?
        var node: String?
        var seq: Int64?
        var sent: Int64?
        var sightings: [Sighting]?
        var dropped = 0
        var rejection: Rejection?
    }

    private static func decode(bytes: UnsafeRawBufferPointer, topicNode: String) -> Result<Decoded, Rejection> {
        var reader = JSONReader(bytes)
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
                    if fields.sent == nil { fields.rejection = fields.rejection ?? .badField("sent") }
                } else if key.is("sightings") {
                    guard try reader.peekKind() == .array else {
                        try reader.skipValue()
                        fields.rejection = fields.rejection ?? .badField("sightings")
                        return
                    }
                    var sightings: [Sighting] = []
                    var dropped = 0
                    var count = 0
                    try reader.readArray { (reader: inout JSONReader) throws(JSONReader.Failure) in
                        count += 1
                        if count > SightingLimits.maximumSightings {
                            try reader.skipValue()
                            return
                        }
                        if let sighting = try readSighting(&reader) {
                            sightings.append(sighting)
                        } else {
                            dropped += 1
                        }
                    }
                    if count > SightingLimits.maximumSightings { fields.rejection = fields.rejection ?? .tooManySightings }
                    fields.sightings = sightings
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
        guard let sightings = fields.sightings else { return .failure(.missingField("sightings")) }
        return .success(Decoded(batch: SightingBatch(node: node, seq: seq, sent: sent, sightings: sightings), droppedSightings: fields.dropped))
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

    /// One sighting, or nil when it must be dropped (not an object, a value missing or out of range).
    private static func readSighting(_ reader: inout JSONReader) throws(JSONReader.Failure) -> Sighting? {
        guard try reader.peekKind() == .object else {
            try reader.skipValue()
            return nil
        }
        var ts: Int64?
        var id: String?
        var rssi: Int64?
        var tx: Int64?
        var txPresent = false
        var addr: String?
        var valid = true
        try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
            if key.is("ts") {
                ts = try readInteger(&reader)
            } else if key.is("id") {
                id = try readString(&reader)
            } else if key.is("rssi") {
                rssi = try readInteger(&reader)
            } else if key.is("tx") {
                if try reader.readNull() { return }
                txPresent = true
                tx = try readInteger(&reader)
            } else if key.is("addr") {
                if try reader.readNull() { return }
                addr = try readString(&reader)
                if addr == nil { valid = false }
            } else {
                try reader.skipValue()
            }
        }
        guard valid,
              let ts, SightingLimits.timestampRange.contains(ts),
              let id, !id.isEmpty, id.utf8.count <= SightingLimits.maximumIdentityLength,
              let rssi, SightingLimits.rssiRange.contains(Int(clamping: rssi))
        else { return nil }
        if txPresent {
            guard let tx, SightingLimits.txRange.contains(Int(clamping: tx)) else { return nil }
        }
        return Sighting(ts: ts, id: id, rssi: Int(rssi), tx: tx.map { Int($0) }, addr: addr)
    }
}
