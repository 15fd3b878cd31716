import Foundation

/// A mosquitto with a configuration of the test's own (TLS, passwords), started directly as a
/// child process on a free loopback port; its log is readable while it runs. Its folder is
/// deleted, and the process killed, when the last reference goes.
final class ConfiguredBroker: Sendable {
    let directory: String
    let port: Int
    let tls: Bool
    private let process: ChildProcess

    init(directory: String, port: Int, tls: Bool, process: ChildProcess) {
        self.directory = directory
        self.port = port
        self.tls = tls
        self.process = process
    }

    var url: String { "\(tls ? "mqtts" : "mqtt")://127.0.0.1:\(port)" }
    /// The CA that signed the TLS broker's certificate.
    var caFile: String { directory + "/ca.crt" }
    /// A CA that did not.
    var otherCAFile: String { directory + "/other-ca.crt" }

    /// What the broker has logged so far.
    var log: String { process.stderr }

    /// A broker with only a TLS listener, its certificate (for 127.0.0.1 and localhost) signed by
    /// a CA made with the `openssl` command, plus a second CA that did not sign it.
    static func tls() async throws -> ConfiguredBroker {
        try await start(tls: true) { directory in
            let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"]
            for name in ["ca", "other-ca"] {
                _ = try await runTool("/usr/bin/openssl", ["req", "-x509"] + key + [
                    "-keyout", "\(directory)/\(name).key", "-out", "\(directory)/\(name).crt", "-subj", "/CN=presence test \(name)",
                ])
            }
            _ = try await runTool("/usr/bin/openssl", ["req"] + key + [
                "-keyout", "\(directory)/server.key", "-out", "\(directory)/server.csr", "-subj", "/CN=localhost",
            ])
            try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(toFile: "\(directory)/san.cnf", atomically: true, encoding: .utf8)
            _ = try await runTool("/usr/bin/openssl", [
                "x509", "-req", "-in", "\(directory)/server.csr", "-CA", "\(directory)/ca.crt", "-CAkey", "\(directory)/ca.key",
                "-CAcreateserial", "-days", "1", "-extfile", "\(directory)/san.cnf", "-out", "\(directory)/server.crt",
            ])
            // mosquitto started as root reads its key after switching to the `mosquitto` user.
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: "\(directory)/server.key")
            return ["allow_anonymous true", "cafile \(directory)/ca.crt", "certfile \(directory)/server.crt", "keyfile \(directory)/server.key"]
        }
    }

    /// A broker run with the project's own deployment configuration (`deploy/mosquitto/`), made by
    /// `scripts/secure-broker.sh` for `prefix` on a free port: TLS for localhost and 127.0.0.1,
    /// passwords for the aggregator, readers and the nodes the registry in `database` holds, and
    /// an account for the bridge of each hall broker in `bridges` (`deploy/mosquitto/bridge.acl`).
    static func deployed(prefix: String, database: String, bridges: [String] = []) async throws -> ConfiguredBroker {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("presence-deployed-\(UUID().uuidString)").path
        let port = try freePort()
        try await secure(directory, port: port, prefix: prefix, environment: ["PRESENCE_DATABASE_URL": database])
        for hall in bridges {
            try await allowBridge(of: hall, prefix: prefix, in: directory)
        }
        return try await launch(directory: directory, port: port, configuration: "\(directory)/mosquitto.conf")
    }

    /// Runs `scripts/secure-broker.sh` for `directory`, `port` and `prefix`, for localhost and 127.0.0.1.
    static func secure(_ directory: String, port: Int, prefix: String, arguments: [String] = [], environment: [String: String] = [:]) async throws {
        let script = PackagePaths.root.appendingPathComponent("scripts/secure-broker.sh").path
        _ = try await runTool("/bin/bash", [script, directory, "--host", "localhost", "--host", "127.0.0.1", "--port", "\(port)", "--prefix", prefix] + arguments,
                        environment: environment)
    }

    /// Starts mosquitto with `configuration`, a TLS broker on `port` whose files are in `directory`.
    static func launch(directory: String, port: Int, configuration: String) async throws -> ConfiguredBroker {
        let process = try ChildProcess.spawn("/usr/sbin/mosquitto", ["-c", configuration])
        let broker = ConfiguredBroker(directory: directory, port: port, tls: true, process: process)
        try await eventually(10, "the broker to start") { process.stderr.contains(" running") }
        return broker
    }

    /// The file holding `user`'s password, as `secure-broker.sh` wrote it.
    func passwordFile(of user: String) -> String {
        "\(directory)/secrets/\(user).password"
    }

    /// A plain broker with mosquitto's dynamic security plugin, the broker's one way to refuse a
    /// subscription (an `acl_file` never does: it grants every SUBSCRIBE and drops at delivery what
    /// a client may not read). Anonymous clients may do anything; `user` (password `password`) may
    /// do anything but subscribe to `refused`, until `grant` lets it, while the broker runs.
    static func refusingSubscriptions(of user: String, password: String, refused: [String]) async throws -> ConfiguredBroker {
        let broker = try await start(tls: false) { directory in
            let configuration = "\(directory)/dynamic-security.json"
            _ = try await runTool("/usr/bin/mosquitto_ctrl", ["dynsec", "init", configuration, "admin", adminPassword])
            // Everything allowed unless a role says otherwise.
            let data = try Data(contentsOf: URL(fileURLWithPath: configuration))
            guard var settings = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw TestSetupError(message: "mosquitto_ctrl wrote no JSON object to \(configuration)")
            }
            settings["defaultACLAccess"] = ["publishClientSend": true, "publishClientReceive": true, "subscribe": true, "unsubscribe": true]
            try JSONSerialization.data(withJSONObject: settings).write(to: URL(fileURLWithPath: configuration))
            // mosquitto started as root runs as the `mosquitto` user, and saves the file on every change.
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory)
            try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: configuration)
            let plugin = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"].map { "\($0)/mosquitto_dynamic_security.so" }
                .first { FileManager.default.fileExists(atPath: $0) }
            guard let plugin else { throw TestSetupError(message: "mosquitto_dynamic_security.so not found: run scripts/install-deps.sh") }
            return ["allow_anonymous true", "plugin \(plugin)", "plugin_opt_config_file \(configuration)"]
        }
        try await broker.control("createClient", user, "-p", password)
        try await broker.control("createRole", user)
        try await broker.control("addClientRole", user, user)
        for filter in refused { try await broker.control("addRoleACL", user, "subscribePattern", filter, "deny", "5") }
        return broker
    }

    /// Lets `user` of `refusingSubscriptions` subscribe to `filter`, as an operator who puts the
    /// broker's ACL right does: at once, without a restart.
    func grant(_ filter: String, to user: String) async throws {
        try await control("removeRoleACL", user, "subscribePattern", filter)
    }

    private static let adminPassword = "admin-\(UUID().uuidString)"

    /// Runs `mosquitto_ctrl dynsec` with `arguments` against this broker, as its admin.
    private func control(_ arguments: String...) async throws {
        _ = try await runTool("/usr/bin/mosquitto_ctrl", ["-h", "127.0.0.1", "-p", "\(port)", "-u", "admin", "-P", Self.adminPassword, "dynsec"] + arguments)
    }

    /// A broker that lets in only `user` with `password`.
    static func withPassword(user: String, password: String) async throws -> ConfiguredBroker {
        try await start(tls: false) { directory in
            _ = try await runTool("/usr/bin/mosquitto_passwd", ["-c", "-b", "\(directory)/passwords", user, password])
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: "\(directory)/passwords")
            return ["allow_anonymous false", "password_file \(directory)/passwords"]
        }
    }

    private static func start(tls: Bool, _ prepare: (String) async throws -> [String]) async throws -> ConfiguredBroker {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("presence-broker-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let port = try freePort()
        let lines = ["listener \(port) 127.0.0.1", "persistence false"] + (try await prepare(directory))
        try (lines.joined(separator: "\n") + "\n").write(toFile: "\(directory)/mosquitto.conf", atomically: true, encoding: .utf8)
        let process = try ChildProcess.spawn("/usr/sbin/mosquitto", ["-c", "\(directory)/mosquitto.conf"])
        let broker = ConfiguredBroker(directory: directory, port: port, tls: tls, process: process)
        try await eventually(10, "the broker to start") { process.stderr.contains(" running") }
        return broker
    }

    /// Stops the broker; also done, less gently, when a failed test drops it.
    func stop() async {
        await process.stop()
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

}
