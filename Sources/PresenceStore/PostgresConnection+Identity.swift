import PresencePostgres

extension PostgresConnection {
    /// The id `presencectl migrate` gave this database (`presence.database_identity`): what its
    /// copies (a promoted standby, a restored backup) keep and a database created anew does not.
    public func databaseIdentity() throws -> String {
        guard let id = try query("SELECT id::text FROM presence.database_identity").rows.first?.string(0) else {
            throw PostgresError(kind: .usage, message: "presence.database_identity holds no row: run `presencectl migrate`")
        }
        return id
    }
}
