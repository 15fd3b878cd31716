extension PresenceEvent {
    /// Why a payload is not an event.
    public struct Unreadable: Error, Sendable, Equatable, CustomStringConvertible {
        public let reason: String
        public var description: String { "not a presence event: \(reason)" }
    }

    /// The event an `encoded()` payload holds (the journal keeps events as their payloads). Numbers
    /// come back as the payload writes them (`rssi` to a tenth of a dB).
    public init(payload: [UInt8]) throws(Unreadable) {
        let fields = try EventFields(payload: payload)
        guard let kind = fields.kind, let id = fields.id, let user = fields.user, let device = fields.device, let beacon = fields.beacon,
              let at = fields.at else { throw Unreadable(reason: "a required member is missing or unknown") }
        guard fields.zone == nil else { throw Unreadable(reason: "a zone's event, not a beacon's") }
        self.init(kind: kind, id: id, user: user, device: device, beacon: beacon, venue: fields.venue, at: at, rssi: fields.rssi,
                  distance: fields.distance, proximity: fields.proximity, entered: fields.entered, reason: fields.reason)
    }
}

/// The members of a published event (a beacon's or a zone's), as the journal reads them back.
struct EventFields {
    var kind: PresenceEvent.Kind?
    var id: String?
    var user: String?
    var device: String?
    var beacon: String?
    var zone: String?
    var venue: String?
    var at: Int64?
    var rssi: Double?
    var distance: Double?
    var proximity: Proximity?
    var entered: Int64?
    var reason: PresenceEvent.ExitReason?

    /// The members of `payload`, or why it is not an event's JSON object.
    init(payload: [UInt8]) throws(PresenceEvent.Unreadable) {
        var fields = EventFields()
        let failure: JSONReader.Failure? = payload.withUnsafeBytes { bytes in
            var reader = JSONReader(bytes)
            do throws(JSONReader.Failure) {
                try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
                    if try reader.peekKind() == .null {
                        _ = try reader.readNull()
                    } else if key.is("event") {
                        fields.kind = PresenceEvent.Kind(rawValue: try reader.readString())
                    } else if key.is("id") {
                        fields.id = try reader.readString()
                    } else if key.is("user") {
                        fields.user = try reader.readString()
                    } else if key.is("device") {
                        fields.device = try reader.readString()
                    } else if key.is("beacon") {
                        fields.beacon = try reader.readString()
                    } else if key.is("zone") {
                        fields.zone = try reader.readString()
                    } else if key.is("venue") {
                        fields.venue = try reader.readString()
                    } else if key.is("at") {
                        fields.at = try reader.readInteger()
                    } else if key.is("rssi") {
                        fields.rssi = try reader.readDouble()
                    } else if key.is("distance") {
                        fields.distance = try reader.readDouble()
                    } else if key.is("proximity") {
                        fields.proximity = Proximity(rawValue: try reader.readString())
                    } else if key.is("entered") {
                        fields.entered = try reader.readInteger()
                    } else if key.is("reason") {
                        fields.reason = PresenceEvent.ExitReason(rawValue: try reader.readString())
                    } else {
                        try reader.skipValue()
                    }
                }
                try reader.expectEnd()
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw PresenceEvent.Unreadable(reason: failure.description) }
        self = fields
    }

    private init() {}
}
