import Foundation
import Logging
import PresencePostgres
import Testing

@Suite(.timeLimit(.minutes(1)))
struct PostgresConnectionTests {
    private struct Abort: Error {}

    @Test func everyEncodableTypeRoundTripsIncludingNull() async throws {
        let (db, _) = try await PostgresTestSupport.connect("roundtrip")
        defer { Task { await db.close() } }
        try await db.execute(script: """
            create table t (id int primary key, s text, i bigint, i64 bigint, i32 int, d float8, b bool);
            """)
        let strings = ["Zürich ✓ 🚀 日本", "O'Brien said \"hi\" \\ back", "'); drop table t; --", "", "tab\tnew\nline"]
        for (index, text) in strings.enumerated() {
            let parameters: [PostgresParameter] = [index, text, Int.max, Int64.min, Int32.min, 0.1, true]
            let inserted = try await db.query("insert into t values ($1, $2, $3, $4, $5, $6, $7)", parameters)
            #expect(inserted.affectedRows == 1)
        }
        let rows = try await db.query("select s, i, i64, i32, d, b from t order by id").rows
        #expect(rows.map { $0.string("s") } == strings)
        for row in rows {
            #expect(try row.int("i") == Int.max)
            #expect(try row.int(2).map(Int64.init) == Int64.min)
            #expect(try row.int("i32") == Int(Int32.min))
            #expect(try row.double("d") == 0.1)
            #expect(try row.bool("b") == true)
        }

        try await db.query("insert into t values ($1, $2, $3, $4, $5, $6, $7)", [99, nil, nil, nil, nil, nil, nil])
        let nulls = try #require(try await db.query("select * from t where id = 99").rows.first)
        #expect(nulls.string("s") == nil)
        #expect(try nulls.int("i") == nil)
        #expect(try nulls.double("d") == nil)
        #expect(try nulls.bool("b") == nil)
        #expect(try await db.query("select count(*) from t where s is null").rows.first?.int(0) == 1)

        let special = try await db.query("select $1::float8, $2::float8, $3::bool", [Double.infinity, -2.5e-300, false])
        let row = try #require(special.rows.first)
        #expect(try row.double(0) == .infinity)
        #expect(try row.double(1) == -2.5e-300)
        #expect(try row.bool(2) == false)
    }

    @Test func aValueThatIsNotOfTheAskedTypeIsADecodingError() async throws {
        let (db, _) = try await PostgresTestSupport.connect("decoding")
        defer { Task { await db.close() } }
        let row = try #require(try await db.query("select 'not a number'::text").rows.first)
        let error = try #require(throws: PostgresError.self) { try row.int(0) }
        #expect(error.kind == .decoding)
        #expect(throws: PostgresError.self) { try row.int("missing") }
    }

    @Test func serverErrorsCarrySQLStateAndMessageAndTheConnectionStaysUsable() async throws {
        let (db, _) = try await PostgresTestSupport.connect("errors")
        defer { Task { await db.close() } }
        try await db.execute(script: "create table t (id int primary key); insert into t values (1);")

        let duplicate = try await #require(throws: PostgresError.self) {
            try await db.query("insert into t values ($1)", [1])
        }
        #expect(duplicate.sqlState == "23505")
        #expect(duplicate.kind == .query)
        #expect(!duplicate.isConnectionFailure)
        #expect(duplicate.message == "duplicate key value violates unique constraint \"t_pkey\"")
        #expect(duplicate.detail == "Key (id)=(1) already exists.")
        #expect(duplicate.description == "[23505] duplicate key value violates unique constraint \"t_pkey\"")

        let syntax = try await #require(throws: PostgresError.self) { try await db.query("selec 1") }
        #expect(syntax.sqlState == "42601")
        #expect(syntax.message.contains("syntax error"))

        let missing = try await #require(throws: PostgresError.self) { try await db.execute(script: "select * from nowhere") }
        #expect(missing.sqlState == "42P01")
        #expect(missing.message == "relation \"nowhere\" does not exist")

        #expect(try await db.query("select count(*) from t").rows.first?.int(0) == 1)
    }

    @Test func transactionCommitsAndRollsBackOnThrowWithTheOriginalError() async throws {
        let (db, url) = try await PostgresTestSupport.connect("transactions")
        defer { Task { await db.close() } }
        try await db.execute(script: "create table t (id int primary key)")

        let inserted = try await db.transaction { db in
            try db.query("insert into t values (1), (2)").affectedRows
        }
        #expect(inserted == 2)
        #expect(try TestDatabase.rows(url, "select count(*) from t") == ["2"])

        await #expect(throws: Abort.self) {
            try await db.transaction { db in
                _ = try db.query("insert into t values (3)")
                throw Abort()
            }
        }
        #expect(try TestDatabase.rows(url, "select count(*) from t") == ["2"])

        let swallowed = try await #require(throws: PostgresError.self) {
            try await db.transaction { db in
                _ = try db.query("insert into t values (4)")
                _ = try? db.query("insert into t values (1)")
            }
        }
        #expect(swallowed.message.contains("rolled back"))
        #expect(try TestDatabase.rows(url, "select count(*) from t") == ["2"])

        let nested = try await #require(throws: PostgresError.self) {
            try await db.transaction { db in try db.transaction { _ in 1 } }
        }
        #expect(nested.kind == .usage)
        #expect(try await db.query("select count(*) from t").rows.first?.int(0) == 2)
    }

    @Test func pipelineRunsManyStatementsInOrder() async throws {
        let (db, url) = try await PostgresTestSupport.connect("pipeline")
        defer { Task { await db.close() } }
        try await db.execute(script: "create table t (id int primary key, name text)")
        var statements = (0..<20_000).map { (index: Int) -> (sql: String, parameters: [PostgresParameter]) in
            (sql: "insert into t values ($1, $2)", parameters: [index, "name " + String(index)])
        }
        statements.append((sql: "select name from t where id = $1", parameters: [19_999]))
        let results = try await db.pipeline(statements)
        #expect(results.count == 20_001)
        #expect(results.dropLast().allSatisfy { $0.affectedRows == 1 })
        #expect(results.last?.rows.first?.string("name") == "name 19999")
        #expect(try TestDatabase.rows(url, "select count(*), sum(id) from t") == ["20000|199990000"])
    }

    @Test func aFailingStatementRollsBackTheWholePipeline() async throws {
        let (db, url) = try await PostgresTestSupport.connect("pipelinefail")
        defer { Task { await db.close() } }
        try await db.execute(script: "create table t (id int primary key); insert into t values (1);")
        let statements: [(sql: String, parameters: [PostgresParameter])] = [
            (sql: "insert into t values ($1)", parameters: [5]),
            (sql: "insert into t values ($1)", parameters: [1]),
            (sql: "insert into t values ($1)", parameters: [6]),
        ]
        let error = try await #require(throws: PostgresError.self) { try await db.pipeline(statements) }
        #expect(error.sqlState == "23505")
        #expect(try TestDatabase.rows(url, "select id from t order by id") == ["1"])
        #expect(try await db.query("select 2 + 2 as four").rows.first?.int("four") == 4)
        #expect(try await db.pipeline([(sql: "insert into t values ($1)", parameters: [7])]).count == 1)
    }

    @Test func copyInLoadsManyRowsWithEscapesAndNulls() async throws {
        let (db, url) = try await PostgresTestSupport.connect("copy")
        defer { Task { await db.close() } }
        try await db.execute(script: "create table t (id int primary key, name text, note text)")
        let tricky = ["tab\there", "new\nline", "back\\slash", "carriage\rreturn", "\\N", "ünïcödé ✓", ""]
        let rows: [[String?]] = (0..<100_000).map { index in
            [String(index), tricky[index % tricky.count], index % 3 == 0 ? nil : "note \(index)"]
        }
        let copied = try await db.copyIn("copy t (id, name, note) from stdin", rows: rows)
        #expect(copied == 100_000)
        #expect(try TestDatabase.rows(url, "select count(*), count(note) from t") == ["100000|66666"])
        let back = try await db.query("select id, name, note from t where id < $1 order by id", [tricky.count])
        #expect(back.rows.map { $0.string("name") } == tricky.map { Optional($0) })
        #expect(back.rows.first?.string("note") == nil)
        #expect(back.rows.dropFirst().first?.string("note") == "note 1")

        let duplicate = try await #require(throws: PostgresError.self) {
            try await db.copyIn("copy t (id, name) from stdin", rows: [["100000", "new"], ["0", "again"]])
        }
        #expect(duplicate.sqlState == "23505")
        #expect(try await db.query("select count(*) from t").rows.first?.int(0) == 100_000)
    }

    @Test func aWrongPortGivesAConnectionErrorThatDoesNotLeakThePassword() async throws {
        let servers = try TestServers.get()
        let password = "s3cret-Pa55word"
        let database = try #require(URL(string: servers.databaseURL)?.lastPathComponent)
        let configurations = [
            PostgresConfiguration(url: "postgres://postgres:\(password)@127.0.0.1:1/\(database)"),
            PostgresConfiguration(url: "postgres://postgres:\(password)@[::1/\(database)"),
            PostgresConfiguration(url: "host=127.0.0.1 port=1 user=postgres password=\(password) connect_timeout=2"),
        ]
        for configuration in configurations {
            let error = try await #require(throws: PostgresError.self) {
                try await PostgresConnection.connect(configuration, logger: PostgresTestSupport.quietLogger)
            }
            #expect(error.isConnectionFailure)
            #expect(error.kind == .connection)
            #expect(!error.description.contains(password))
            #expect(!error.message.contains(password))
            #expect(!"\(configuration)".contains(password))
        }
    }

    @Test func ensureConnectedRecoversAfterTheBackendIsTerminated() async throws {
        let (db, url) = try await PostgresTestSupport.connect("reconnect")
        defer { Task { await db.close() } }
        for checkFirst in [true, false] {
            let before = try #require(try await db.query("select pg_backend_pid()").rows.first?.int(0))
            #expect(try TestDatabase.rows(url, "select pg_terminate_backend(\(before), 5000)") == ["t"])
            if !checkFirst {
                let lost = try await #require(throws: PostgresError.self) { try await db.query("select 1") }
                #expect(lost.isConnectionFailure)
            }
            try await db.ensureConnected()
            let after = try #require(try await db.query("select pg_backend_pid()").rows.first?.int(0))
            #expect(after != before)
            #expect(try await db.query("show timezone").rows.first?.string(0) == "UTC")
        }
    }

    @Test func closeIsIdempotentAndLaterCallsThrow() async throws {
        let (db, _) = try await PostgresTestSupport.connect("close")
        #expect(await db.isOpen)
        await db.close()
        await db.close()
        #expect(await !db.isOpen)
        let error = try await #require(throws: PostgresError.self) { try await db.query("select 1") }
        #expect(error.isConnectionFailure)
        await #expect(throws: PostgresError.self) { try await db.ensureConnected() }
    }

    @Test func misuseIsRefusedAndLeavesTheConnectionUsable() async throws {
        let (db, _) = try await PostgresTestSupport.connect("misuse")
        defer { Task { await db.close() } }
        try await db.execute(script: "create table t (id int, name text)")
        let nul = try await #require(throws: PostgresError.self) { try await db.query("select $1::text", ["a\u{0}b"]) }
        #expect(nul.kind == .usage)
        let copyByQuery = try await #require(throws: PostgresError.self) { try await db.query("copy t from stdin") }
        #expect(copyByQuery.kind == .usage)
        let copyOut = try await #require(throws: PostgresError.self) { try await db.execute(script: "copy t to stdout") }
        #expect(copyOut.kind == .usage)
        let notCopy = try await #require(throws: PostgresError.self) { try await db.copyIn("select 1", rows: [["1"]]) }
        #expect(notCopy.kind == .usage)
        #expect(try await db.copyIn("copy t from stdin", rows: [["1", "one"]]) == 1)
        #expect(try await db.query("select name from t").rows.map { $0.string(0) } == ["one"])
    }

    @Test func aConnectionReleasedWithoutCloseIsFinished() async throws {
        let url = try TestDatabase.create("release")
        let records = PostgresLogRecords()
        var configuration = PostgresConfiguration(url: url)
        configuration.applicationName = "released-\(UInt32.random(in: .min ... .max))"
        let count = "select count(*) from pg_stat_activity where application_name = '\(configuration.applicationName)'"
        var db: PostgresConnection? = try await PostgresConnection.connect(configuration, logger: records.logger)
        #expect(try await db?.query("select 1").rows.count == 1)
        #expect(try TestDatabase.rows(url, count) == ["1"])
        db = nil
        let gone = try await PostgresTestSupport.eventually(timeout: .seconds(5)) { try TestDatabase.rows(url, count) == ["0"] }
        #expect(gone)
        #expect(records.all.contains { $0.message == "connection released without close()" })
    }

    @Test func serverNoticesGoToTheLogger() async throws {
        let records = PostgresLogRecords()
        let (db, _) = try await PostgresTestSupport.connect("notices", logger: records.logger)
        defer { Task { await db.close() } }
        try await db.execute(script: "do $$ begin raise notice 'hello %', 42; end $$")
        let notice = records.all.first { $0.message == "server notice" }
        #expect(notice?.metadata["postgres.message"] == "hello 42")
        #expect(notice?.level == .notice)
    }

    @Test func blockingQueriesDoNotBlockTheCooperativePool() async throws {
        let url = try TestDatabase.create("blocking")
        // Eight two-second sleeps: on Swift's pool of two threads (this machine has two cores) they
        // would run two at a time, for eight seconds, and nothing else could run meanwhile; each on
        // its own thread, they take about two seconds and the pool stays free. Timing is judged by
        // order, with seconds of margin, so that a machine loaded by the other suites does not make
        // the test lie.
        var connections: [PostgresConnection] = []
        for _ in 0..<8 {
            connections.append(try await PostgresConnection.connect(PostgresConfiguration(url: url), logger: PostgresTestSupport.quietLogger))
        }
        let start = ContinuousClock.now
        let (firstDone, probe, elapsed) = try await withThrowingTaskGroup(of: ContinuousClock.Instant.self) { group in
            for connection in connections {
                group.addTask {
                    _ = try await connection.query("select pg_sleep(2)")
                    return .now
                }
            }
            try await Task.sleep(for: .milliseconds(100))
            // Work on the pool while every query is still sleeping.
            let probe = await Task { ContinuousClock.now }.value
            var finished: [ContinuousClock.Instant] = []
            for try await end in group { finished.append(end) }
            return (finished.min() ?? .now, probe, ContinuousClock.now - start)
        }
        for connection in connections { await connection.close() }
        #expect(probe < firstDone, "the pool ran nothing until a query ended")
        #expect(elapsed < .milliseconds(6_500), "the eight sleeps did not run side by side: \(elapsed)")
    }
}
