import ArgumentParser
import PresenceCLI
import PresenceCore
import PresenceDatabaseCLI
import PresenceStore

struct ShardsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shards",
        abstract: "Show the venue's shard count and which aggregator owns each shard since when, or set the count with --set.",
        discussion: """
            Nodes split each batch by device into that many shards (FNV-1a 32-bit of the device's identity, modulo the \
            count) and publish each part on {prefix}/v1/sightings/{node}/{shard}; with 1, batches stay whole on \
            {prefix}/v1/sightings/{node}. The aggregators hear of a change within 2 s and publish it retained on \
            {prefix}/v1/config, where nodes read it. Each shard is decided by one aggregator (its --client-id), which \
            holds the shard's advisory lock in PostgreSQL; "-" when none does (no aggregator runs, or one is taking over).
            """)

    @OptionGroup var connection: ConnectionOptions
    @Option(help: "The new shard count, 1 to 1024.") var set: Int?

    func run() async throws {
        let wanted = try set.map { count -> Shards in
            do {
                return try Shards(count: count)
            } catch {
                throw ValueError("--set \(count) is not valid: expected a shard count from 1 to \(Shards.maximum)")
            }
        }
        let (shards, owners) = try await withDatabase(connection) { database -> (Shards, [ShardOwner]) in
            if let wanted { try await database.setShards(wanted) }
            return (try await database.loadRegistry().shards, wanted == nil ? try await database.shardOwners() : [])
        }
        print("\(shards.count) shard\(shards.count == 1 ? "" : "s")")
        guard wanted == nil else { return }
        print(TableOutput.render(header: ["SHARD", "OWNER", "SINCE"], rows: owners.map { owner in
            [String(owner.shard), owner.clientID ?? "-", owner.clientID == nil ? "-" : owner.since.map { ISO8601Text.string(milliseconds: $0) } ?? "-"]
        }))
    }
}
