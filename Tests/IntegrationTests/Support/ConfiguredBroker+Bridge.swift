import Foundation

extension ConfiguredBroker {
    /// The user name, and client id, of hall `hall`'s bridge on the central broker.
    static func bridgeUser(of hall: String) -> String {
        "presence-bridge-\(hall)"
    }

    /// Gives the deployed broker in `directory` an account for hall `hall`'s bridge: a password
    /// (kept in `secrets/` beside the others) and `deploy/mosquitto/bridge.acl` for `prefix`,
    /// appended to its ACL as the documentation says.
    static func allowBridge(of hall: String, prefix: String, in directory: String) async throws {
        let user = bridgeUser(of: hall)
        let password = UUID().uuidString
        try password.write(toFile: "\(directory)/secrets/\(user).password", atomically: true, encoding: .utf8)
        _ = try await runTool("/usr/bin/mosquitto_passwd", ["-b", "\(directory)/passwords", user, password])
        // mosquitto started as root reads it as the `mosquitto` user.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: "\(directory)/passwords")
        let fragment = try String(contentsOf: PackagePaths.root.appendingPathComponent("deploy/mosquitto/bridge.acl"), encoding: .utf8)
        let lines = fragment.replacingOccurrences(of: "presence/v1/", with: "\(prefix)/v1/").replacingOccurrences(of: "hall-a", with: hall)
        let acl = try String(contentsOfFile: "\(directory)/acl", encoding: .utf8)
        try (acl + "\n" + lines).write(toFile: "\(directory)/acl", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: "\(directory)/acl")
    }

    /// A hall broker run with `deploy/mosquitto/bridge.conf` as a venue would, for nodes `nodes`:
    /// its certificate, passwords and ACL made by `scripts/secure-broker.sh`, the example's paths,
    /// port, central address, bridge password, topic prefix and hall name put in, and its bridge
    /// connecting over TLS to `central` with the account `deployed(bridges:)` made there.
    static func hall(_ name: String, prefix: String, nodes: [String], bridgedTo central: ConfiguredBroker) async throws -> ConfiguredBroker {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("presence-hall-\(UUID().uuidString)").path
        let port = try freePort()
        try await secure(directory, port: port, prefix: prefix, arguments: ["--nodes", nodes.joined(separator: ",")])
        try FileManager.default.copyItem(atPath: central.caFile, toPath: "\(directory)/central-ca.crt")
        let password = try String(contentsOfFile: central.passwordFile(of: bridgeUser(of: name)), encoding: .utf8)
        let example = try String(contentsOf: PackagePaths.root.appendingPathComponent("deploy/mosquitto/bridge.conf"), encoding: .utf8)
        let configuration = [
            ("/etc/mosquitto/presence/", "\(directory)/"),
            ("/var/lib/mosquitto/presence/", "\(directory)/data/"),
            ("listener 8883", "listener \(port)"),
            ("central.example:8883", "127.0.0.1:\(central.port)"),
            ("CHANGE-ME", password),
            ("presence/v1/", "\(prefix)/v1/"),
            ("hall-a", name),
        ].reduce(example) { $0.replacingOccurrences(of: $1.0, with: $1.1) }
        let settings = configuration.split(separator: "\n").filter { !$0.hasPrefix("#") }.joined(separator: "\n")
        if let left = ["/etc/mosquitto/", "/var/lib/", "central.example", "CHANGE-ME"].first(where: settings.contains) {
            throw TestSetupError(message: "deploy/mosquitto/bridge.conf still says \(left) once made for this test")
        }
        let file = "\(directory)/hall.conf"
        try configuration.write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        return try await launch(directory: directory, port: port, configuration: file)
    }
}
