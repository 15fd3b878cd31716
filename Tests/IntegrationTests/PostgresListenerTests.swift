import Foundation
import Logging
import PresencePostgres
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1)))
struct PostgresListenerTests {
    /// The events a consumer task has read so far, and whether the sequence ended.
    private final class EventLog: Sendable {
        private let state = Mutex<(events: [PostgresListenerEvent], finished: Bool)>(([], false))

        /// Starts a task that reads every event of `listener` into a new log.
        static func consume(_ listener: PostgresListener) -> EventLog {
            let log = EventLog()
            Task { [events = listener.events] in
                for await event in events { log.state.withLock { $0.events.append(event) } }
                log.state.withLock { $0.finished = true }
            }
            return log
        }

        var events: [PostgresListenerEvent] { state.withLock { $0.events } }
        var finished: Bool { state.withLock { $0.finished } }

        var notifications: [PostgresListenerEvent] {
            events.filter { if case .notification = $0 { true } else { false } }
        }

        func waitFor(_ timeout: Duration = .seconds(10), _ condition: @Sendable (EventLog) -> Bool) async -> Bool {
            await PostgresTestSupport.eventually(timeout: timeout) { condition(self) }
        }
    }

    private func makeListener(_ url: String, channels: [String], name: String, logger: Logger = PostgresTestSupport.quietLogger) -> PostgresListener {
        var configuration = PostgresConfiguration(url: url)
        configuration.applicationName = name
        return PostgresListener(configuration: configuration, channels: channels, logger: logger)
    }

    @Test func notificationsArriveInOrderWithTheirPayloads() async throws {
        let (sender, url) = try await PostgresTestSupport.connect("listen")
        defer { Task { await sender.close() } }
        let listener = makeListener(url, channels: ["presence_events", "Other"], name: "listener-order")
        defer { listener.stop() }
        let log = EventLog.consume(listener)
        listener.start()
        #expect(await log.waitFor { $0.events.first == .listening })

        for index in 1...50 {
            try await sender.query("select pg_notify($1, $2)", ["presence_events", "event \(index)"])
        }
        try await sender.query("select pg_notify($1, $2)", ["Other", "Zürich 'quoted' \"x\""])
        try await sender.query("select pg_notify($1, $2)", ["not_listened", "ignored"])
        try await sender.query("select pg_notify($1, $2)", ["presence_events", "last"])

        #expect(await log.waitFor { $0.notifications.count >= 52 })
        let expected = (1...50).map { PostgresListenerEvent.notification(channel: "presence_events", payload: "event \($0)") }
            + [.notification(channel: "Other", payload: "Zürich 'quoted' \"x\""),
               .notification(channel: "presence_events", payload: "last")]
        #expect(log.notifications == expected)
        #expect(log.events.filter { $0 == .listening }.count == 1)
    }

    @Test func survivesTheTerminationOfItsBackend() async throws {
        let (sender, url) = try await PostgresTestSupport.connect("listenreconnect")
        defer { Task { await sender.close() } }
        let name = "listener-\(UInt32.random(in: .min ... .max))"
        let listener = makeListener(url, channels: ["presence_events"], name: name)
        defer { listener.stop() }
        let log = EventLog.consume(listener)
        listener.start()
        #expect(await log.waitFor { $0.events.first == .listening })
        try await sender.query("select pg_notify('presence_events', 'before')")
        #expect(await log.waitFor { $0.notifications.count == 1 })

        let terminated = try TestDatabase.rows(url, """
            select pg_terminate_backend(pid, 5000) from pg_stat_activity where application_name = '\(name)'
            """)
        #expect(terminated == ["t"])
        #expect(await log.waitFor { $0.events.contains(.reconnected) })

        try await sender.query("select pg_notify('presence_events', 'after')")
        #expect(await log.waitFor { $0.notifications.count == 2 })
        #expect(log.events == [
            .listening,
            .notification(channel: "presence_events", payload: "before"),
            .reconnected,
            .notification(channel: "presence_events", payload: "after"),
        ])
    }

    @Test func stopFinishesTheSequenceAndClosesTheConnection() async throws {
        let url = try TestDatabase.create("listenstop")
        let name = "listener-stop"
        let listener = makeListener(url, channels: ["a", "b"], name: name)
        let log = EventLog.consume(listener)
        listener.start()
        #expect(await log.waitFor { $0.events == [.listening] })
        #expect(try TestDatabase.rows(url, "select count(*) from pg_stat_activity where application_name = '\(name)'") == ["1"])

        let start = ContinuousClock.now
        listener.stop()
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(await log.waitFor(.seconds(2)) { $0.finished })
        listener.stop()
        listener.start()
        let gone = try await PostgresTestSupport.eventually(timeout: .seconds(5)) {
            try TestDatabase.rows(url, "select count(*) from pg_stat_activity where application_name = '\(name)'") == ["0"]
        }
        #expect(gone)
        #expect(log.events == [.listening])
    }

    @Test func stopWithoutStartFinishesTheSequence() async {
        let listener = makeListener("postgres://127.0.0.1:1/none", channels: ["a"], name: "never")
        let log = EventLog.consume(listener)
        listener.stop()
        #expect(await log.waitFor(.seconds(2)) { $0.finished })
        #expect(log.events.isEmpty)
    }

    @Test func anInvalidChannelNameEndsTheEventsWithoutListening() async throws {
        let url = try TestDatabase.create("listenbad")
        #expect(!PostgresListener.isValidChannel("a\"; drop table t; --"))
        #expect(!PostgresListener.isValidChannel("1abc"))
        #expect(PostgresListener.isValidChannel("presence_events$2"))
        let records = PostgresLogRecords()
        let listener = makeListener(url, channels: ["ok", "a\"; drop"], name: "listener-bad", logger: records.logger)
        defer { listener.stop() }
        let log = EventLog.consume(listener)
        listener.start()
        #expect(await log.waitFor(.seconds(5)) { $0.finished })
        #expect(log.events.isEmpty)
        #expect(records.all.contains { $0.level == .error && $0.metadata["postgres.channel"] == "a\"; drop" })
    }

    @Test func retriesWhileTheServerIsUnreachableAndStopsPromptly() async {
        let records = PostgresLogRecords()
        let listener = makeListener("postgres://postgres:pw@127.0.0.1:1/none", channels: ["a"], name: "unreachable", logger: records.logger)
        let log = EventLog.consume(listener)
        listener.start()
        #expect(await PostgresTestSupport.eventually(timeout: .seconds(5)) {
            records.all.filter { $0.message == "listener could not connect" }.count >= 2
        })
        let start = ContinuousClock.now
        listener.stop()
        #expect(ContinuousClock.now - start < .seconds(1))
        #expect(await log.waitFor(.seconds(2)) { $0.finished })
        #expect(log.events.isEmpty)
        #expect(!records.all.contains { $0.metadata.values.contains { $0.contains("pw@") } })
    }
}
