import Foundation

/// Streaming replication between private servers, through `scripts/servers.sh standby`, `promote`
/// and `postgres-kill`: a standby of a running server, a failover, and the multi-host URL that
/// follows it.
extension PrivatePostgres {
    /// A streaming standby of this running server: a base backup of it, started on a port of its
    /// own, read-only until `promote()`. Call `remove()` on it too.
    func standby() throws(TestSetupError) -> PrivatePostgres {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("presence-standby-\(UUID().uuidString)").path
        return PrivatePostgres(directory: directory, url: try runServersScript(["standby", self.directory, directory]))
    }

    /// Stops the server at once (`-m immediate`), as a crash would: what it had not yet sent its
    /// standbys never reaches them.
    func kill() throws(TestSetupError) {
        _ = try runServersScript(["postgres-kill", directory])
    }

    /// Promotes this standby; it takes writes once this returns.
    func promote() throws(TestSetupError) {
        _ = try runServersScript(["promote", directory])
    }

    /// `127.0.0.1:port`, as a multi-host URL lists it.
    var hostAndPort: String {
        guard let at = url.lastIndex(of: "@"), let slash = url[at...].firstIndex(of: "/") else { return url }
        return String(url[url.index(after: at)..<slash])
    }

    /// A libpq URL listing every server of `servers`, that connects to the one taking writes.
    static func multiHostURL(_ servers: [PrivatePostgres]) -> String {
        "postgres://postgres@\(servers.map(\.hostAndPort).joined(separator: ","))/postgres?target_session_attrs=read-write"
    }

    /// Waits until this standby has replayed what `primary` had written when called.
    func waitUntilReplayed(_ primary: PrivatePostgres, within seconds: Double) async throws {
        guard let written = try TestDatabase.rows(primary.url, "SELECT pg_current_wal_lsn()").first else {
            throw TestSetupError(message: "the primary at \(primary.url) gave no WAL position")
        }
        try await eventually(seconds, "the standby to replay the primary's WAL up to \(written)") {
            (try? TestDatabase.rows(url, "SELECT pg_last_wal_replay_lsn() >= '\(written)'::pg_lsn")) == ["t"]
        }
    }

    /// Cuts this standby off from its primary (an empty `primary_conninfo`, reloaded): it keeps what
    /// it has and receives nothing more, as an asynchronous standby that lags behind.
    func detachFromPrimary(within seconds: Double) async throws {
        _ = try TestDatabase.rows(url, "ALTER SYSTEM SET primary_conninfo = ''")
        _ = try TestDatabase.rows(url, "SELECT pg_reload_conf()")
        try await eventually(seconds, "the standby to stop receiving WAL") {
            (try? TestDatabase.rows(url, "SELECT count(*) FROM pg_stat_wal_receiver")) == ["0"]
        }
    }
}
