import ArgumentParser
import PresenceCLI
import PresenceCore
import PresenceDatabaseCLI
import PresenceStore

extension NodeCommand {
    struct Pin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pin a node's RSSI offset: self-calibration leaves it alone.",
            discussion: "Without --rssi-offset, pins the offset self-calibration last stored for the node.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The node's key.") var key: String
        @Option(parsing: .unconditional, help: "The offset to pin, dB (added to every RSSI the node reports).") var rssiOffset: Double?

        func run() async throws {
            let key = try Slug(key, what: "node")
            let rssiOffset = try validRSSIOffset(rssiOffset)
            let pinned = try await withDatabase(connection) { try await $0.pinNode(key, offset: rssiOffset) }
            print("node \(key) pinned at \(CalibrateCommand.decibels(pinned)) dB")
        }
    }

    struct Unpin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unpin a node: its registered offset goes back to 0 and self-calibration fits it.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The node's key.") var key: String

        func run() async throws {
            let key = try Slug(key, what: "node")
            try await withDatabase(connection) { try await $0.unpinNode(key) }
            print("node \(key) unpinned")
        }
    }
}
