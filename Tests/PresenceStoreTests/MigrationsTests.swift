import Foundation
import PresenceCore
import PresencePostgres
import Testing
@testable import PresenceStore

/// The schema's migrations and the store's ordering, without a server.
@Suite struct MigrationsTests {
    /// `schemas/sql`, found from this file's place in the package.
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("schemas/sql")

    @Test func everyFileIsAMigrationInOrderAndNoneIsForgotten() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(files.count == Migration.all.count, "a file in schemas/sql is not listed in Migration.all, or the other way round")
        for (index, (file, migration)) in zip(files, Migration.all).enumerated() {
            #expect(migration.version == index + 1)
            #expect(file == String(format: "v%03d_%@.sql", migration.version, migration.name))
            #expect(try String(contentsOf: Self.folder.appendingPathComponent(file), encoding: .utf8) == migration.sql)
        }
        #expect(Set(Migration.all.map(\.checksum)).count == Migration.all.count)
    }

    @Test func eventsGoInGenerationsSoThatEachStatementTouchesAUserOnce() {
        func message(_ user: String, _ at: Int64) -> OutboundMessage {
            OutboundMessage(PresenceEvent(kind: .enter, id: "\(user)-\(at)", user: user, device: "d", beacon: "b", venue: nil, at: at), .standard)
        }
        let events = [message("alice", 1), message("bob", 2), message("alice", 3), message("alice", 4), message("carol", 5)]
        let generations = PostgresConnection.generations(events).map { $0.compactMap(\.event?.id) }
        #expect(generations == [["alice-1", "bob-2", "carol-5"], ["alice-3"], ["alice-4"]])
    }
}
