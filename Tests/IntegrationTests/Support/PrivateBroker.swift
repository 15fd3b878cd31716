import Foundation

/// A mosquitto of one test's own, started through `scripts/servers.sh broker` (or `hall`, bridged
/// to another), which the test may stop and start again on the same port. Call `remove()` when
/// done (a `defer` does).
struct PrivateBroker: Sendable {
    let directory: String
    let url: String
    let port: Int
    /// What `scripts/servers.sh` was asked to start, the folder aside: `restart()` asks it again.
    private let command: String
    private let options: [String]

    /// A broker alone; `persistent` keeps sessions, queued and retained messages across a restart.
    static func start(persistent: Bool = false) throws(TestSetupError) -> PrivateBroker {
        try start("broker", persistent ? ["--persistent"] : [])
    }

    /// A hall broker whose bridge takes the nodes' topics under `prefix` to the broker at
    /// `central` and brings back the configuration and the aggregator's output.
    static func hall(bridgedTo central: String, prefix: String) throws(TestSetupError) -> PrivateBroker {
        try start("hall", [central, prefix])
    }

    private static func start(_ command: String, _ options: [String]) throws(TestSetupError) -> PrivateBroker {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("presence-broker-\(UUID().uuidString)").path
        let url = try runServersScript([command, directory] + options)
        guard let colon = url.lastIndex(of: ":"), let port = Int(url[url.index(after: colon)...]) else {
            throw TestSetupError(message: "scripts/servers.sh \(command) printed \(url)")
        }
        return PrivateBroker(directory: directory, url: url, port: port, command: command, options: options)
    }

    /// Stops the broker (SIGTERM; a persistent one saves its state); its port stays reserved for
    /// `restart()`.
    func stop() throws(TestSetupError) {
        _ = try runServersScript(["broker-stop", directory])
    }

    /// Starts the broker again on the same port, with the state it saved if it is persistent,
    /// else with none.
    func restart() throws(TestSetupError) {
        _ = try runServersScript([command, directory] + options)
    }

    /// Stops the broker and deletes its folder.
    func remove() {
        try? stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Runs `scripts/servers.sh` with `arguments` and returns what it printed, trimmed.
func runServersScript(_ arguments: [String]) throws(TestSetupError) -> String {
    let script = PackagePaths.root.appendingPathComponent("scripts/servers.sh").path
    return try runToolBlocking(script, arguments).trimmingCharacters(in: .whitespacesAndNewlines)
}
