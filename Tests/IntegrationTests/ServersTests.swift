import Testing

@Suite struct ServersTests {
    @Test func serversStartAndAFreshDatabaseIsEmpty() throws {
        let url = try TestDatabase.create("servers")
        let tables = try TestDatabase.rows(url, "select count(*) from pg_tables where schemaname = 'public'")
        #expect(tables == ["0"])
    }
}
