import PresenceCore
import PresencePostgres
import PresenceStore
import Testing

/// Storing what the aggregator decided: set-based statements in one transaction, sessions in the
/// order of each user's events, and nothing changed by storing the same batch again.
@Suite struct StoreBatchTests {
    static let t0: Int64 = 1_763_774_700_000

    static let topics = Topics.standard

    /// An event's message, as the core makes it (its payload encoded once).
    static func event(_ kind: PresenceEvent.Kind, _ user: String, _ beacon: String, at: Int64, entered: Int64? = nil,
                      reason: PresenceEvent.ExitReason? = nil) -> OutboundMessage {
        OutboundMessage(PresenceEvent(kind: kind, id: EventID.make(kind: kind, user: user, device: "mac:00:11:22:33:44:55", beacon: beacon, at: at, entered: entered),
                      user: user, device: "mac:00:11:22:33:44:55", beacon: beacon, venue: "expo", at: at,
                      rssi: kind == .enter ? -60 : nil, distance: kind == .enter ? 1 : nil, proximity: kind == .enter ? .near : nil,
                      entered: entered, reason: reason), topics)
    }

    @Test func eachUsersEventsApplyInOrderAndStoringTwiceChangesNothing() async throws {
        let (database, _) = try await PostgresTestSupport.connect("store-batch")
        _ = try await database.migrate(logger: PostgresTestSupport.quietLogger)
        // Carol has an open session the engine does not know; dave's exit has none to close.
        var carol = StoreBatch()
        carol.events = [Self.event(.enter, "carol", "a", at: Self.t0 - 60_000)]
        try await database.store(carol)

        var batch = StoreBatch()
        batch.events = [
            Self.event(.enter, "alice", "a", at: Self.t0),
            Self.event(.enter, "bob", "b", at: Self.t0 + 100),
            Self.event(.exit, "alice", "a", at: Self.t0 + 5_000, entered: Self.t0, reason: .moved),
            Self.event(.enter, "alice", "b", at: Self.t0 + 5_000),
            Self.event(.enter, "carol", "c", at: Self.t0 + 6_000),
            Self.event(.exit, "dave", "a", at: Self.t0 + 7_000, entered: Self.t0, reason: .timeout),
            Self.event(.exit, "bob", "b", at: Self.t0 + 8_000, entered: Self.t0 + 100, reason: .timeout),
        ]
        batch.notifications = [
            PresenceNotification(user: "alice", beacon: "b", kind: .hello, message: #"Hi "Alice", \ welcome, {b}"#, at: Self.t0 + 5_000),
            PresenceNotification(user: "alice", beacon: "b", kind: .hello, message: "later", at: Self.t0 + 5_500),
        ]
        batch.clock = ("aggregator-1", Self.t0 + 9_000)
        batch.lastSeen = [.init(user: "alice", time: Self.t0 + 8_500)]
        let report = try await database.store(batch)
        #expect(report.alreadyStored == 0)
        #expect(report.staleSessionsClosed == ["carol"])
        #expect(report.exitsWithoutSession == ["dave at a"])

        let sessions = """
            SELECT user_key, beacon_key, exit_reason, (EXTRACT(EPOCH FROM last_seen_at) * 1000)::bigint FROM presence.sessions ORDER BY user_key, entered_at
            """
        let expected = [
            "alice|a|moved|\(Self.t0)", "alice|b||\(Self.t0 + 8_500)", "bob|b|timeout|\(Self.t0 + 100)",
            "carol|a|removed|\(Self.t0 - 60_000)", "carol|c||\(Self.t0 + 6_000)",
        ]
        #expect(try await rows(database, sessions) == expected)
        #expect(try await rows(database, "SELECT message FROM presence.notifications") == ["later"])
        #expect(try await rows(database, "SELECT count(*) FROM presence.events") == ["8"])
        let payloads = try await rows(database, "SELECT payload FROM presence.events ORDER BY seq")
        // Stored as published, byte for byte.
        #expect(payloads.last == String(decoding: batch.events.last?.payload ?? [], as: UTF8.self))

        batch.published = batch.events.prefix(1).compactMap(\.event?.id)
        let again = try await database.store(batch)
        #expect(again.alreadyStored == batch.events.count && again.staleSessionsClosed.isEmpty)
        #expect(try await rows(database, sessions) == expected)
        #expect(try await rows(database, "SELECT count(*) FROM presence.events WHERE published_at IS NOT NULL") == ["1"])
        #expect(try await rows(database, "SELECT (EXTRACT(EPOCH FROM clock) * 1000)::bigint FROM presence.aggregator_clock") == ["\(Self.t0 + 9_000)"])
        await database.close()
    }

    @Test func aJSONArrayParameterCarriesEachDocumentAsItIs() async throws {
        let (database, _) = try await PostgresTestSupport.connect("json-array")
        let documents = [#"{"a" :  1, "b":"ü \"q\""}"#, "[]", #"{"v":1,"rssi":-61.5}"#]
        let back = try await database.query("SELECT e::text FROM json_array_elements($1::json) WITH ORDINALITY AS v (e, n) ORDER BY n",
                                            [PostgresJSONArray(documents.map { Array($0.utf8) })])
        #expect(back.rows.map { $0.string(0) } == documents)
        await database.close()
    }

    @Test func arrayParametersQuoteWhatTheyCarry() async throws {
        let (database, _) = try await PostgresTestSupport.connect("arrays")
        let texts: [String?] = [#"a "quoted" \ backslash"#, "comma, {brace}", nil, "", "NULL", "ünïcode ✓"]
        let back = try await database.query("SELECT x FROM unnest($1::text[]) WITH ORDINALITY AS t (x, n) ORDER BY n", [PostgresArray(texts)])
        #expect(back.rows.map { $0.string(0) } == texts)
        let numbers = try await database.query("SELECT sum(x) FROM unnest($1::bigint[]) AS t (x)", [PostgresArray([Int64.max - 5, -3, 1])])
        #expect(try numbers.rows.first?.int(0).map(Int64.init) == Int64.max - 7)
        await database.close()
    }

    private func rows(_ database: PostgresConnection, _ sql: String) async throws -> [String] {
        try await database.query(sql).rows.map { row in row.values.map { $0 ?? "" }.joined(separator: "|") }
    }
}
