import Foundation

/// The private mosquitto and PostgreSQL that every integration test in this process shares,
/// started once through `scripts/servers.sh` on free loopback ports. A reaper started by the
/// script stops them when this process ends, however it ends.
struct TestServers: Sendable {
    let brokerURL: String
    let databaseURL: String
    let directory: URL

    static let shared: Result<TestServers, TestSetupError> = start()

    /// The servers, or a test failure that says why they could not start.
    static func get() throws -> TestServers { try shared.get() }

    private static func start() -> Result<TestServers, TestSetupError> {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("presence-tests-\(ProcessInfo.processInfo.processIdentifier)")
        let script = PackagePaths.root.appendingPathComponent("scripts/servers.sh").path
        let pid = String(ProcessInfo.processInfo.processIdentifier)
        let output: String
        do {
            output = try runToolBlocking(script, ["start", directory.path, "--owner", pid])
        } catch {
            return .failure(error)
        }
        var values: [String: String] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        guard let broker = values["PRESENCE_BROKER_URL"], let database = values["PRESENCE_DATABASE_URL"] else {
            return .failure(TestSetupError(message: "scripts/servers.sh printed no URLs: \(output)"))
        }
        return .success(TestServers(brokerURL: broker, databaseURL: database, directory: directory))
    }
}

/// Why the test environment could not be prepared.
struct TestSetupError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Where the package and its built executables are.
enum PackagePaths {
    /// The package's root folder, found from this file's path.
    static let root: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url
            }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    /// The folder of the test binary, where SwiftPM also puts the package's executables.
    static let binaries: URL = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return exe.deletingLastPathComponent()
    }()

    /// The path of one of the package's executables, or an error telling how to build it.
    static func executable(_ name: String) throws -> String {
        let path = binaries.appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestSetupError(message: "\(path) is missing: run `swift build` before `swift test`")
        }
        return path
    }
}
