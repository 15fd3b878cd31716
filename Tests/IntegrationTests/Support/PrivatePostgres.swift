import Foundation

/// A PostgreSQL of one test's own, started through `scripts/servers.sh postgres`, which the test
/// may stop and start again on the same port with its data. Call `remove()` when done.
struct PrivatePostgres: Sendable {
    let directory: String
    let url: String

    static func start() throws(TestSetupError) -> PrivatePostgres {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("presence-pg-\(UUID().uuidString)").path
        return PrivatePostgres(directory: directory, url: try runServersScript(["postgres", directory]))
    }

    /// Stops the server (fast shutdown: open sessions are ended).
    func stop() throws(TestSetupError) {
        _ = try runServersScript(["postgres-stop", directory])
    }

    func restart() throws(TestSetupError) {
        _ = try runServersScript(["postgres", directory])
    }

    func remove() {
        try? stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
