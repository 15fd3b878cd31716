import Testing
@testable import PresenceCore

@Suite struct JournalCodecTests {
    static let enter = PresenceEvent(kind: .enter, id: "64203148-b9b1-8e72-a492-70891f114da5", user: "alice", device: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1",
                                     beacon: "booth-a", venue: "expo", at: 1_763_774_735_050, rssi: -61.5, distance: 1.8, proximity: .near)
    static let exit = PresenceEvent(kind: .exit, id: "0bd15029-338b-8ad6-9099-29ca76cfc10d", user: "alice", device: "mac:c4:7c:8d:6a:2b:01",
                                    beacon: "booth-a", venue: nil, at: 1_763_774_790_000, entered: 1_763_774_735_050, reason: .moved)

    static let topics = (try? Topics(prefix: "site/presence")) ?? { preconditionFailure() }()

    static var changes: PresenceBoard.Changes {
        var changes = PresenceBoard.Changes()
        changes.users = [UserState(user: "alice", beacon: "booth-a", venue: "expo", since: 7, position: Position(x: 1.5, y: -2, floor: -1, accuracy: 0.4)),
                         UserState(user: "bob", beacon: nil, venue: nil, since: .min)]
        changes.clearedUsers = ["carol"]
        changes.beacons = [BeaconState(beacon: "booth-a", users: ["alice", "ünïcode ✓"]), BeaconState(beacon: "booth-b", users: [])]
        changes.deletedBeacons = ["booth-z"]
        return changes
    }

    static let goodbye = PresenceNotification(user: "alice", beacon: "booth-a", kind: .goodbye, message: "Bye \"{name}\" \\ 🎈", at: .max)

    static var records: [OutboundRecord] {
        [
            .decided(.init(messages: [OutboundMessage(enter, topics), OutboundMessage(exit, topics),
                                      OutboundMessage(topic: topics.notify(user: "alice"), payload: goodbye.encoded())] + changes.messages(topics),
                           notifications: [goodbye], decidedAt: 1_763_774_791_234)),
            .decided(.init(messages: [], decidedAt: .min)),
            .decided(.init(messages: [OutboundMessage(enter, topics)], decidedAt: 1_763_774_791_235, publishOnceStored: true)),
            .progress(.init(clock: 1_763_774_800_000, lastSeen: [.init(user: "alice", time: 5), .init(user: "bob", time: -5)])),
            .progress(.init(clock: 0, lastSeen: [])),
            .erased(users: ["alice", "ünïcode ✓"]),
            .erased(users: []),
            .decided(.init(messages: [OutboundMessage(topic: "homeassistant/device_tracker/presence_alice/state", payload: Array("booth-a".utf8), retain: true),
                                      OutboundMessage(topic: "ha/x", payload: [], retain: true),
                                      OutboundMessage(topic: "t/ünï", payload: [0, 0xFF, 0x80])], decidedAt: 3)),
        ]
    }

    @Test func anEventsPayloadReadsBackAsTheEvent() throws {
        #expect(try PresenceEvent(payload: Self.enter.encoded()) == Self.enter)
        #expect(try PresenceEvent(payload: Self.exit.encoded()) == Self.exit)
        for payload in ["", "{}", "[]", #"{"event":"enter"}"#, #"{"event":"leave","id":"x","user":"u","device":"d","beacon":"b","at":1}"#] {
            #expect(throws: PresenceEvent.Unreadable.self) { try PresenceEvent(payload: Array(payload.utf8)) }
        }
    }

    @Test func aRecordOfTheOlderLayoutReadsBackAsTheMessagesItPublished() throws {
        let body = JournalCodec.encodeLegacy(events: [Self.enter, Self.exit], notifications: [Self.goodbye], states: Self.changes, decidedAt: 42)
        guard case .decided(let decided) = try JournalCodec.decode(body[...], topics: Self.topics) else {
            Issue.record("not a decided record")
            return
        }
        #expect(decided.decidedAt == 42 && decided.events == [Self.enter, Self.exit] && decided.notifications == [Self.goodbye])
        #expect(decided.messages.map(\.topic) == ["site/presence/v1/events/booth-a/alice", "site/presence/v1/events/booth-a/alice",
                                                 "site/presence/v1/notify/alice"] + Self.changes.messages(Self.topics).map(\.topic))
        #expect(decided.messages.first?.payload == Self.enter.encoded())
    }

    @Test func everyRecordReadsBackAsItWasWritten() throws {
        for record in Self.records {
            #expect(try JournalCodec.decode(JournalCodec.encode(record)[...], topics: Self.topics) == record)
        }
    }

    @Test func whetherARecordIsPublishedOnceStoredIsItsKind() throws {
        let record = OutboundRecord.Decided(messages: [OutboundMessage(Self.enter, Self.topics)], decidedAt: 5)
        var once = record
        once.publishOnceStored = true
        #expect(JournalCodec.encode(.decided(record)).first == 6)
        #expect(JournalCodec.encode(.decided(once)).first == 7)
        #expect(try JournalCodec.decode(JournalCodec.encode(.decided(once))[...], topics: Self.topics) == .decided(once))
        #expect(try JournalCodec.decode(JournalCodec.encode(.decided(record))[...], topics: Self.topics) == .decided(record))
    }

    @Test func damagedBodiesThrowInsteadOfTrapping() {
        for record in Self.records {
            let body = JournalCodec.encode(record)
            for cut in 0 ..< body.count {
                #expect(throws: MalformedBytes.self) { try JournalCodec.decode(body[..<cut], topics: Self.topics) }
            }
            #expect(throws: MalformedBytes.self) { try JournalCodec.decode((body + [0])[...], topics: Self.topics) }
        }
        // A count claiming more elements than bytes left, and an unknown kind.
        #expect(throws: MalformedBytes.self) { try JournalCodec.decode([3, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F][...], topics: Self.topics) }
        #expect(throws: MalformedBytes.self) { try JournalCodec.decode([9][...], topics: Self.topics) }
        var random = RandomSource(seed: 11)
        for _ in 0 ..< 2_000 {
            var body = JournalCodec.encode(Self.records[Int(random.next() % 5)])
            body[Int(random.next() % UInt64(body.count))] ^= UInt8(1 + random.next() % 255)
            _ = try? JournalCodec.decode(body[...], topics: Self.topics)
        }
    }

    @Test func framesReadBackUpToATornOrDamagedTail() {
        let bodies = Self.records.map(JournalCodec.encode)
        let file = bodies.flatMap(JournalFrame.frame)
        let whole = JournalFrame.scan(file[...])
        #expect(!whole.torn && whole.end == file.count && whole.frames.map { Array($0.body) } == bodies)
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)

        let secondStart = JournalFrame.headerSize + bodies[0].count
        for cut in [file.count - 1, secondStart + 3, secondStart + JournalFrame.headerSize + 1] {
            let torn = JournalFrame.scan(file[..<cut])
            #expect(torn.torn && torn.frames.count == (cut > secondStart + JournalFrame.headerSize + bodies[1].count ? torn.frames.count : 1))
            #expect(torn.frames.last.map { $0.offset + JournalFrame.headerSize + $0.body.count } == torn.end)
        }
        var damaged = file
        damaged[secondStart + JournalFrame.headerSize] ^= 0x40
        let scan = JournalFrame.scan(damaged[...])
        #expect(scan.torn && scan.frames.count == 1 && scan.end == secondStart)
    }

    @Test func aFoldLaysJournalRecordsOverWhatTheDatabaseSaid() {
        let bob = Presence(user: "bob", device: "mac:00:11:22:33:44:55", beacon: "b", venue: "expo", entered: 1, lastSeen: 2)
        var fold = JournalFold(sessions: [bob], clock: 100, notifications: [])
        let bobLeaves = PresenceEvent(kind: .exit, id: "x", user: "bob", device: bob.device, beacon: "b", venue: "expo", at: 50, entered: 1, reason: .timeout)
        let records: [OutboundRecord] = [
            .decided(.init(messages: [OutboundMessage(Self.enter, Self.topics)], decidedAt: 0)),
            .progress(.init(clock: 90, lastSeen: [.init(user: "alice", time: Self.enter.at + 900), .init(user: "carol", time: 5)])),
            .decided(.init(messages: [OutboundMessage(bobLeaves, Self.topics)],
                           notifications: [PresenceNotification(user: "bob", beacon: "b", kind: .goodbye, message: "m", at: 50)], decidedAt: 0)),
            .progress(.init(clock: 300, lastSeen: [.init(user: "alice", time: Self.enter.at + 500)])),
        ]
        for record in records { fold.apply(record) }
        #expect(fold.openSessions.map(\.user) == ["alice"])
        #expect(fold.openSessions.first?.lastSeen == Self.enter.at + 900)
        #expect(fold.clock == 300 && fold.notifications.count == 1)
        // Laying the same records over the result again changes nothing.
        let once = fold
        for record in records { fold.apply(record) }
        #expect(fold == once)
    }

    @Test func aFoldForgetsAnErasedUsersSessionAndNotifications() {
        var fold = JournalFold(sessions: [], clock: 100, notifications: [])
        fold.apply(.decided(.init(messages: [OutboundMessage(Self.enter, Self.topics)],
                                  notifications: [PresenceNotification(user: "alice", beacon: "a", kind: .hello, message: "m", at: 5)], decidedAt: 0)))
        #expect(fold.openSessions.map(\.user) == ["alice"] && fold.notifications.count == 1)
        fold.apply(.erased(users: ["alice"]))
        #expect(fold.openSessions.isEmpty && fold.notifications.isEmpty)
    }

    @Test func theDeadlineQueueAlwaysYieldsTheEarliestAndMovesEntriesInPlace() {
        var queue = DeadlineQueue()
        var model: [Int: Int64] = [:]
        var random = RandomSource(seed: 3)
        for _ in 0 ..< 20_000 {
            let slot = Int(random.next() % 200)
            switch random.next() % 4 {
            case 0:
                queue.remove(slot)
                model[slot] = nil
            default:
                let deadline = Int64(random.next() % 1_000) - 500
                queue.set(slot, deadline)
                model[slot] = deadline
            }
            let expected = model.min { ($0.value, $0.key) < ($1.value, $1.key) }
            #expect(queue.min?.slot == expected?.key && queue.min?.deadline == expected?.value)
            #expect(queue.deadline(of: slot) == model[slot])
        }
    }
}
