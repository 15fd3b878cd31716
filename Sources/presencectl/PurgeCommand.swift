import ArgumentParser
import PresenceCLI
import PresenceDatabaseCLI
import PresenceStore

struct PurgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge",
        abstract: "Delete, once, the history past its retention (the aggregator does so every hour with the same flags).",
        discussion: "Open sessions and events not yet published always stay.")

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var keep: RetentionOptions

    func run() async throws {
        let retention = try keep.retention()
        let report = try await withDatabase(connection) { try await $0.purge(retention) }
        print("purged \(report.sessions) sessions, \(report.zoneSessions) zone sessions, \(report.events) events and \(report.notifications) notifications" + (report.months == 0 ? "" : " (\(report.months) whole months)"))
    }
}
