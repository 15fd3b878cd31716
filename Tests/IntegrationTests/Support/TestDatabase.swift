import Foundation

/// A fresh, empty database on the shared test server, so that tests running side by side never
/// see each other's rows. Created with `psql`, which is independent of the code under test.
enum TestDatabase {
    /// psql itself rather than /usr/bin/psql, Debian's wrapper: a Perl script that picks a version
    /// before psql starts, and a `SELECT 1` through it takes four times as long (46 ms against 11).
    /// The suites run psql over a thousand times, many of them in a loop that waits for a row; the
    /// newest installed version is the one the wrapper picks for a URL.
    static let psql: String = {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.compactMap(Int.init).sorted(by: >) {
            let path = "/usr/lib/postgresql/\(version)/bin/psql"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return "/usr/bin/psql"
    }()

    /// Creates a database with a unique name and returns its URL.
    static func create(_ label: String = "t") throws -> String {
        let servers = try TestServers.get()
        let name = "\(label.lowercased().filter { $0.isLetter || $0.isNumber })_\(UInt32.random(in: .min ... .max))"
        _ = try runToolBlocking(psql, [servers.databaseURL, "-v", "ON_ERROR_STOP=1", "-qc", "CREATE DATABASE \(name)"])
        guard let slash = servers.databaseURL.lastIndex(of: "/") else {
            throw TestSetupError(message: "unexpected database URL \(servers.databaseURL)")
        }
        return servers.databaseURL[..<slash] + "/" + name
    }

    /// Creates a database as a copy of the one at `url` (which nothing may be connected to), as a
    /// restored backup of it would be, and returns its URL.
    static func copy(of url: String, _ label: String = "copy") throws -> String {
        guard let slash = url.lastIndex(of: "/") else { throw TestSetupError(message: "unexpected database URL \(url)") }
        let servers = try TestServers.get()
        let name = "\(label.lowercased().filter { $0.isLetter || $0.isNumber })_\(UInt32.random(in: .min ... .max))"
        _ = try runToolBlocking(psql, [servers.databaseURL, "-v", "ON_ERROR_STOP=1", "-qc", "CREATE DATABASE \(name) TEMPLATE \(url[url.index(after: slash)...])"])
        return url[..<slash] + "/" + name
    }

    /// Runs one SQL statement through `psql` and returns its rows, fields separated by `|`.
    static func rows(_ url: String, _ sql: String) throws -> [String] {
        let output = try runToolBlocking(psql, [url, "-v", "ON_ERROR_STOP=1", "-qAtc", sql])
        return output.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }
}
