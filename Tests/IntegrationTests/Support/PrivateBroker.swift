import Foundation

/// A mosquitto of one test's own, started through `scripts/servers.sh broker`, which the test may
/// stop and start again on the same port. Call `remove()` when done (a `defer` does).
struct PrivateBroker: Sendable {
    let directory: String
    let url: String
    let port: Int

    static func start() throws(TestSetupError) -> PrivateBroker {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("presence-broker-\(UUID().uuidString)").path
        let url = try run(["broker", directory])
        guard let colon = url.lastIndex(of: ":"), let port = Int(url[url.index(after: colon)...]) else {
            throw TestSetupError(message: "scripts/servers.sh broker printed \(url)")
        }
        return PrivateBroker(directory: directory, url: url, port: port)
    }

    /// Stops the broker (SIGTERM); its port stays reserved for `restart()`.
    func stop() throws(TestSetupError) {
        _ = try Self.run(["broker-stop", directory])
    }

    /// Starts the broker again on the same port, with no state from before (persistence is off).
    func restart() throws(TestSetupError) {
        _ = try Self.run(["broker", directory])
    }

    /// Stops the broker and deletes its folder.
    func remove() {
        try? stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func run(_ arguments: [String]) throws(TestSetupError) -> String {
        try runServersScript(arguments)
    }
}

/// Runs `scripts/servers.sh` with `arguments` and returns what it printed, trimmed.
func runServersScript(_ arguments: [String]) throws(TestSetupError) -> String {
    let script = PackagePaths.root.appendingPathComponent("scripts/servers.sh").path
    return try runTool(script, arguments).trimmingCharacters(in: .whitespacesAndNewlines)
}
