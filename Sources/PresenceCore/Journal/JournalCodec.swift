/// The binary form of an `OutboundRecord` in the aggregator's journal: a kind byte, then the
/// record's values in `ByteWriter`'s layout. A decided record holds its messages as they are
/// published (an event's message as its payload, the event's JSON), so that an event is encoded
/// once; its kind says whether it is published only once stored. Records of the layout before that (kinds 1, 2 and 5, whose messages were made when
/// published) are read into today's form with the topics they were published under. Decoding never
/// traps: a damaged body throws.
public enum JournalCodec {
    private enum Kind: UInt8 {
        case legacyDecided = 1, legacyStates = 2, progress = 3, erased = 4, legacyMessages = 5, decided = 6, decidedPublishedOnceStored = 7
    }

    public static func encode(_ record: OutboundRecord) -> [UInt8] {
        var writer = ByteWriter()
        switch record {
        case .decided(let decided):
            writer.byte((decided.publishOnceStored ? Kind.decidedPublishedOnceStored : Kind.decided).rawValue)
            writer.array(decided.messages) { writer, message in
                writer.string(message.topic)
                writer.raw(message.payload)
                writer.byte((message.retain ? 1 : 0) | (message.event != nil ? 2 : 0) | (message.zoneEvent != nil ? 4 : 0))
            }
            writer.array(decided.notifications, write)
            writer.int64(decided.decidedAt)
        case .progress(let progress):
            writer.byte(Kind.progress.rawValue)
            writer.int64(progress.clock)
            writer.array(progress.lastSeen) { writer, seen in
                writer.string(seen.user)
                writer.int64(seen.time)
            }
        case .erased(let users):
            writer.byte(Kind.erased.rawValue)
            writer.array(users) { $0.string($1) }
        }
        return writer.bytes
    }

    /// The record in `body`, or why it cannot be read; `topics` are those a record of the older
    /// layout is published under (the journal's binding names them).
    public static func decode(_ body: ArraySlice<UInt8>, topics: Topics) throws(MalformedBytes) -> OutboundRecord {
        var reader = ByteReader(body)
        let record: OutboundRecord
        let kind = Kind(rawValue: try reader.byte())
        switch kind {
        case .decided, .decidedPublishedOnceStored:
            let messages = try reader.array { (reader: inout ByteReader) throws(ByteReader.Malformed) in
                let topic = try reader.string()
                let payload = try reader.raw()
                let flags = try reader.byte()
                do throws(PresenceEvent.Unreadable) {
                    return try OutboundMessage(topic: topic, payload: payload, retain: flags & 1 != 0, carriesEvent: flags & 2 != 0,
                                               carriesZoneEvent: flags & 4 != 0)
                } catch {
                    throw ByteReader.Malformed(offset: reader.position, what: "an event message whose payload is \(error)")
                }
            }
            let notifications = try reader.array(notification)
            record = .decided(.init(messages: messages, notifications: notifications, decidedAt: try reader.int64(),
                                    publishOnceStored: kind == .decidedPublishedOnceStored))
        case .legacyDecided:
            let events = try reader.array(event)
            let notifications = try reader.array(notification)
            let states = try changes(&reader)
            let messages = events.map { OutboundMessage($0, topics) }
                + notifications.map { OutboundMessage(topic: topics.notify(user: $0.user), payload: $0.encoded()) } + states.messages(topics)
            record = .decided(.init(messages: messages, notifications: notifications, decidedAt: try reader.int64()))
        case .legacyStates:
            record = .decided(.init(messages: try changes(&reader).messages(topics), decidedAt: 0))
        case .progress:
            let clock = try reader.int64()
            let lastSeen = try reader.array { (reader: inout ByteReader) throws(ByteReader.Malformed) in
                OutboundRecord.LastSeen(user: try reader.string(), time: try reader.int64())
            }
            record = .progress(.init(clock: clock, lastSeen: lastSeen))
        case .erased:
            record = .erased(users: try reader.array { (reader: inout ByteReader) throws(ByteReader.Malformed) in try reader.string() })
        case .legacyMessages:
            record = .decided(.init(messages: try reader.array { (reader: inout ByteReader) throws(ByteReader.Malformed) in
                let topic = try reader.string()
                let payload = try reader.raw()
                let retain = try reader.byte() != 0
                let event = try reader.optional { (reader: inout ByteReader) throws(ByteReader.Malformed) in try reader.string() }
                do throws(PresenceEvent.Unreadable) {
                    return try OutboundMessage(topic: topic, payload: payload, retain: retain, carriesEvent: event != nil)
                } catch {
                    throw ByteReader.Malformed(offset: reader.position, what: "an event message whose payload is \(error)")
                }
            }, decidedAt: 0))
        case nil:
            throw ByteReader.Malformed(offset: body.startIndex, what: "an unknown record kind")
        }
        guard reader.isAtEnd else { throw ByteReader.Malformed(offset: reader.position, what: "bytes after the record") }
        return record
    }

    /// The older layout of a decided record, for tests of reading it back.
    static func encodeLegacy(events: [PresenceEvent], notifications: [PresenceNotification], states: PresenceBoard.Changes, decidedAt: Int64) -> [UInt8] {
        var writer = ByteWriter()
        writer.byte(Kind.legacyDecided.rawValue)
        writer.array(events, write)
        writer.array(notifications, write)
        write(&writer, states)
        writer.int64(decidedAt)
        return writer.bytes
    }

    // MARK: Values

    private static func write(_ writer: inout ByteWriter, _ event: PresenceEvent) {
        writer.byte(event.kind == .enter ? 0 : 1)
        writer.string(event.id)
        writer.string(event.user)
        writer.string(event.device)
        writer.string(event.beacon)
        writer.optional(event.venue) { $0.string($1) }
        writer.int64(event.at)
        writer.optional(event.rssi) { $0.double($1) }
        writer.optional(event.distance) { $0.double($1) }
        writer.optional(event.proximity) { $0.string($1.rawValue) }
        writer.optional(event.entered) { $0.int64($1) }
        writer.optional(event.reason) { $0.string($1.rawValue) }
    }

    private static func event(_ reader: inout ByteReader) throws(ByteReader.Malformed) -> PresenceEvent {
        let kind: PresenceEvent.Kind
        switch try reader.byte() {
        case 0: kind = .enter
        case 1: kind = .exit
        default: throw ByteReader.Malformed(offset: reader.position - 1, what: "an unknown event kind")
        }
        let id = try reader.string()
        let user = try reader.string()
        let device = try reader.string()
        let beacon = try reader.string()
        let venue = try reader.optional { (reader: inout ByteReader) throws(ByteReader.Malformed) in try reader.string() }
        let at = try reader.int64()
        let rssi = try reader.optional { (reader: inout ByteReader) throws(ByteReader.Malformed) in try reader.double() }
        let distance = try reader.optional { (reader: inout ByteReader) throws(ByteReader.Malformed) in try reader.double() }
        let proximity = try reader.optional { (reader: inout ByteReader) throws(ByteReader.Malformed) in try named(Proximity.self, &reader) }
        let entered = try reader.optional { (reader: inout ByteReader) throws(ByteReader.Malformed) in try reader.int64() }
        let reason = try reader.optional { (reader: inout ByteReader) throws(ByteReader.Malformed) in try named(PresenceEvent.ExitReason.self, &reader) }
        return PresenceEvent(kind: kind, id: id, user: user, device: device, beacon: beacon, venue: venue, at: at, rssi: rssi,
                             distance: distance, proximity: proximity, entered: entered, reason: reason)
    }

    private static func write(_ writer: inout ByteWriter, _ notification: PresenceNotification) {
        writer.string(notification.user)
        writer.string(notification.beacon)
        writer.string(notification.kind.rawValue)
        writer.string(notification.message)
        writer.int64(notification.at)
    }

    private static func notification(_ reader: inout ByteReader) throws(ByteReader.Malformed) -> PresenceNotification {
        let user = try reader.string()
        let beacon = try reader.string()
        let kind = try named(PresenceNotification.Kind.self, &reader)
        return PresenceNotification(user: user, beacon: beacon, kind: kind, message: try reader.string(), at: try reader.int64())
    }

    private static func write(_ writer: inout ByteWriter, _ changes: PresenceBoard.Changes) {
        writer.array(changes.users) { writer, state in
            writer.string(state.user)
            writer.optional(state.beacon) { $0.string($1) }
            writer.optional(state.venue) { $0.string($1) }
            writer.int64(state.since)
            writer.optional(state.position) { writer, position in
                writer.double(position.x)
                writer.double(position.y)
                writer.optional(position.floor) { $0.int64(Int64($1)) }
                writer.double(position.accuracy)
            }
        }
        writer.array(changes.clearedUsers) { $0.string($1) }
        writer.array(changes.beacons) { writer, state in
            writer.string(state.beacon)
            writer.array(state.users) { $0.string($1) }
        }
        writer.array(changes.deletedBeacons) { $0.string($1) }
    }

    private static func changes(_ reader: inout ByteReader) throws(ByteReader.Malformed) -> PresenceBoard.Changes {
        var changes = PresenceBoard.Changes()
        changes.users = try reader.array { (reader: inout ByteReader) throws(ByteReader.Malformed) in
            let user = try reader.string()
            let beacon = try reader.optional { (reader: inout ByteReader) throws(ByteReader.Malformed) in try reader.string() }
            let venue = try reader.optional { (reader: inout ByteReader) throws(ByteReader.Malformed) in try reader.string() }
            let since = try reader.int64()
            let position = try reader.optional { (reader: inout ByteReader) throws(ByteReader.Malformed) in
                let x = try reader.double()
                let y = try reader.double()
                let floor = try reader.optional { (reader: inout ByteReader) throws(ByteReader.Malformed) in Int(truncatingIfNeeded: try reader.int64()) }
                return Position(x: x, y: y, floor: floor, accuracy: try reader.double())
            }
            return UserState(user: user, beacon: beacon, venue: venue, since: since, position: position)
        }
        changes.clearedUsers = try reader.array { (reader: inout ByteReader) throws(ByteReader.Malformed) in try reader.string() }
        changes.beacons = try reader.array { (reader: inout ByteReader) throws(ByteReader.Malformed) in
            BeaconState(beacon: try reader.string(), users: try reader.array { (reader: inout ByteReader) throws(ByteReader.Malformed) in try reader.string() })
        }
        changes.deletedBeacons = try reader.array { (reader: inout ByteReader) throws(ByteReader.Malformed) in try reader.string() }
        return changes
    }

    private static func named<T: RawRepresentable>(_ type: T.Type, _ reader: inout ByteReader) throws(ByteReader.Malformed) -> T where T.RawValue == String {
        let text = try reader.string()
        guard let value = T(rawValue: text) else { throw ByteReader.Malformed(offset: reader.position, what: "an unknown name '\(text.prefix(32))'") }
        return value
    }
}
