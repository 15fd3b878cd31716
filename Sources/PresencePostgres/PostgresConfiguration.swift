/// How to reach the database. `description` shows the target without the password.
public struct PostgresConfiguration: Sendable, CustomStringConvertible {
    /// `postgres://user:pass@host:port/db?params` (libpq parses URIs) or `key=value` conninfo.
    /// libpq's own defaults and `PG*` environment variables fill what it leaves out.
    public var url: String
    /// Shown in `pg_stat_activity.application_name`; overrides one given in the URL.
    public var applicationName: String = "presence"
    /// Seconds allowed for connecting (and for each reconnect); libpq treats values below 2 as 2.
    public var connectTimeout: Int = 5
    /// The longest a statement may run before the server cancels it, ms; nil for no limit (the
    /// server's default). Long-running services set one, so that no call can wait for ever.
    public var statementTimeout: Int64?
    /// How long sent data may stay unacknowledged before the connection is given up, ms (TCP user
    /// timeout): a half-open connection then fails instead of blocking. With the keep-alives
    /// (after 30 s idle, every 10 s, 3 probes) it also bounds how long a dead server goes unnoticed.
    public var tcpUserTimeout: Int = 30_000

    public init(url: String) {
        self.url = url
    }

    /// `postgres://user@host:port/dbname`, or a placeholder if the URL does not parse. A URL of
    /// several hosts shows each with its port, and the kind of server it asks for
    /// (`postgres://user@a:5432,b:5433/db?target_session_attrs=read-write`).
    public var description: String {
        guard let options = ConnectionString.parse(url) else { return "<unparsable connection string>" }
        let user = options["user"].map { "\($0)@" } ?? ""
        let hosts = (options["host"] ?? options["hostaddr"] ?? "(default socket)").split(separator: ",", omittingEmptySubsequences: false)
        // libpq takes one port for every host, or one port per host.
        let ports = options["port"]?.split(separator: ",", omittingEmptySubsequences: false) ?? []
        let targets = hosts.enumerated().map { index, host in
            let port = ports.count == hosts.count ? ports[index] : ports.count == 1 ? ports[0] : ""
            return port.isEmpty ? String(host) : "\(host):\(port)"
        }
        let attributes = options["target_session_attrs"].map { "?target_session_attrs=\($0)" } ?? ""
        return "postgres://\(user)\(targets.joined(separator: ","))/\(options["dbname"] ?? "")\(attributes)"
    }
}
