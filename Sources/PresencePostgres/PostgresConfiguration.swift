/// How to reach the database. `description` shows the target without the password.
public struct PostgresConfiguration: Sendable, CustomStringConvertible {
    /// `postgres://user:pass@host:port/db?params` (libpq parses URIs) or `key=value` conninfo.
    /// libpq's own defaults and `PG*` environment variables fill what it leaves out.
    public var url: String
    /// Shown in `pg_stat_activity.application_name`; overrides one given in the URL.
    public var applicationName: String = "presence"
    /// Seconds allowed for connecting (and for each reconnect); libpq treats values below 2 as 2.
    public var connectTimeout: Int = 5

    public init(url: String) {
        self.url = url
    }

    /// `postgres://user@host:port/dbname`, or a placeholder if the URL does not parse.
    public var description: String {
        guard let options = ConnectionString.parse(url) else { return "<unparsable connection string>" }
        let user = options["user"].map { "\($0)@" } ?? ""
        let host = options["host"] ?? options["hostaddr"] ?? "(default socket)"
        let port = options["port"].map { ":\($0)" } ?? ""
        return "postgres://\(user)\(host)\(port)/\(options["dbname"] ?? "")"
    }
}
