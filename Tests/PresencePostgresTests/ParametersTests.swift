import Testing
@testable import PresencePostgres

/// What the adapter hands libpq and the server, without a server: connection parameters, secrets
/// scrubbed from messages, and parameters that carry many rows.
@Suite struct ParametersTests {
    @Test func theURLComesBeforeWhatTheAdapterReliesOn() {
        var configuration = PostgresConfiguration(url: "postgres://u:secret@db.example/venue?options=-c%20x%3Dy")
        configuration.statementTimeout = 30_000
        let keywords = ConnectionString.parameters(configuration).map(\.0)
        #expect(keywords.firstIndex(of: "dbname")! < keywords.firstIndex(of: "options")!)
        #expect(keywords.firstIndex(of: "keepalives")! < keywords.firstIndex(of: "dbname")!)
        #expect(ConnectionString.parameters(configuration).last?.1 == "-c TimeZone=UTC -c DateStyle=ISO -c statement_timeout=30000")
        #expect(configuration.description == "postgres://u@db.example/venue", "the description never shows the password")
    }

    @Test func aURLOfSeveralHostsReachesLibpqAsItIsAndIsDescribedHostByHost() {
        let url = "postgres://presence:secret@db-1:5432,db-2:5433/venue?target_session_attrs=read-write"
        let configuration = PostgresConfiguration(url: url)
        #expect(ConnectionString.parameters(configuration).first { $0.0 == "dbname" }?.1 == url)
        let parsed = ConnectionString.parse(url)
        #expect(parsed?["host"] == "db-1,db-2" && parsed?["port"] == "5432,5433" && parsed?["target_session_attrs"] == "read-write")
        #expect(configuration.description == "postgres://presence@db-1:5432,db-2:5433/venue?target_session_attrs=read-write")
        #expect(PostgresConfiguration(url: "postgres://db-1,db-2:6432/venue").description == "postgres://db-1,db-2:6432/venue", "db-1 on the default port")
        #expect(PostgresConfiguration(url: "host=db-1,db-2 port=6432 dbname=venue").description == "postgres://db-1:6432,db-2:6432/venue")
        #expect(PostgresConfiguration(url: "host=db-1,db-2 port=5432, dbname=venue").description == "postgres://db-1:5432,db-2/venue")
    }

    @Test func aPasswordNeverReachesAMessage() {
        let redact = ConnectionString.redactor(for: "postgres://alice:p%40ss@db.example:5432/venue")
        #expect(redact("could not connect with p@ss or p%40ss to postgres://alice:p%40ss@db.example:5432/venue") == "could not connect with *** or *** to ***")
    }

    @Test func aJSONArrayJoinsItsDocumentsAsTheyAre() {
        #expect(PostgresJSONArray([Array(#"{"a" : 1}"#.utf8), Array("[]".utf8)]).postgresText == #"[{"a" : 1},[]]"#)
        #expect(PostgresJSONArray([]).postgresText == "[]")
    }

    @Test func anArrayLiteralQuotesEveryElement() {
        #expect(PostgresArray([#"a "b" \ c"#, nil, ""]).postgresText == #"{"a \"b\" \\ c",NULL,""}"#)
    }
}
