import ArgumentParser
import Foundation
import PresenceCLI
import PresenceCore
import PresenceDatabaseCLI
import PresenceStore
import Synchronization
import Yams

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the registry (venues, beacons, nodes; users and devices with --users) as YAML, for `import`.")
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Only this venue's beacons and nodes.") var venue: String?
    @Flag(help: "Include users and their devices (personal data: keep the file as carefully as the database).") var users = false
    @Option(help: "Write to this file instead of standard output.") var out: String?

    func run() async throws {
        let venue = try venue.map { try Slug($0, what: "venue").value }
        let registry = try await withDatabase(connection) { try await $0.loadRegistry() }
        if let venue, registry.venues[venue] == nil { throw ValueError("venue '\(venue)' does not exist") }
        let text = "# presencectl export: read back with `presencectl import FILE`\n"
            + (try YAMLEncoder().encode(VenueFile(registry, venue: venue, users: users)))
        if let out {
            guard FileManager.default.createFile(atPath: out, contents: Data(text.utf8), attributes: [.posixPermissions: users ? 0o600 : 0o644]) else {
                throw ValueError("--out '\(out)' cannot be written")
            }
        } else {
            print(text, terminator: "")
        }
    }
}

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add or update the registry from a YAML file written by `export` (or by hand), all of it or nothing.",
        discussion: "Every value is checked before anything is written; things the file does not mention are left as they are.")
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The YAML file.") var file: String
    @Flag(help: "Check the file and say what it holds; write nothing.") var dryRun = false

    func run() async throws {
        guard let data = FileManager.default.contents(atPath: file) else { throw ValueError("file '\(file)' cannot be read") }
        let venueFile: VenueFile
        do {
            venueFile = try YAMLDecoder().decode(VenueFile.self, from: data)
        } catch let error as DecodingError {
            throw ValueError("file '\(file)' is not a venue file: \(Self.describe(error))")
        } catch {
            throw ValueError("file '\(file)' is not valid YAML: \(String(describing: error).split(separator: "\n").first ?? "")")
        }
        let registry = try venueFile.registry()
        let summary = "\(registry.venues.count) venues, \(registry.zones.count) zones, \(registry.beacons.count) beacons, \(registry.nodes.count) nodes, "
            + "\(registry.users.count) users, \(registry.devices.count) devices"
        if dryRun {
            print("\(file) is valid: \(summary)")
            return
        }
        let progress = Mutex(ProgressBar("imported", total: venueFile.count))
        try await withDatabase(connection) { db in
            try await db.importRegistry(registry) { done in progress.withLock { $0.update(done) } }
        }
        progress.withLock { $0.finish() }
        print("imported \(summary)")
    }

    private static func describe(_ error: DecodingError) -> String {
        let (context, what): (DecodingError.Context, String) = switch error {
        case .typeMismatch(let type, let context): (context, "expected \(type)")
        case .valueNotFound(let type, let context): (context, "expected \(type)")
        case .keyNotFound(let key, let context): (context, "'\(key.stringValue)' is missing")
        case .dataCorrupted(let context): (context, context.debugDescription)
        @unknown default: (DecodingError.Context(codingPath: [], debugDescription: ""), "\(error)")
        }
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return (path.hasPrefix(".") ? String(path.dropFirst()) : path) + (path.isEmpty ? "" : ": ") + what
    }
}
