import ArgumentParser
import PresenceCLI
import PresenceCore
import PresenceDatabaseCLI
import PresenceStore

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List one kind of the registry: venues, beacons, nodes, users or devices.")

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case venues, beacons, nodes, users, devices
    }

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "venues, beacons, nodes, users or devices.") var kind: Kind
    @Option(help: "Only this venue's beacons and nodes.") var venue: String?
    @Flag(help: "One JSON object per line.") var json = false

    func run() async throws {
        let venue = try venue.map { try Slug($0, what: "venue").value }
        let registry = try await withDatabase(connection) { try await $0.loadRegistry() }
        let table = Self.table(kind, registry, venue: venue)
        if json {
            for row in table.rows {
                var w = JSONWriter()
                w.object { w in
                    for (name, cell) in zip(table.header, row) where !cell.isEmpty { w.member(name, cell) }
                }
                print(String(decoding: w.bytes, as: UTF8.self))
            }
        } else {
            print(TableOutput.render(header: table.header.map { $0.uppercased() }, rows: table.rows.map { $0.map { $0.isEmpty ? "-" : $0 } }))
        }
    }

    /// The kind's columns and rows, sorted by key; empty cells for values not set.
    static func table(_ kind: Kind, _ registry: Registry, venue: String?) -> (header: [String], rows: [[String]]) {
        let inVenue = { (key: String?) in venue == nil || key == venue }
        let number = { (value: Double?) in value.map { $0 == $0.rounded() ? String(Int($0)) : String($0) } ?? "" }
        let int = { (value: Int?) in value.map(String.init) ?? "" }
        switch kind {
        case .venues:
            return (["key", "name"], registry.venues.values.filter { inVenue($0.key) }.sorted { $0.key < $1.key }.map { [$0.key, $0.name ?? ""] })
        case .beacons:
            return (["key", "venue", "name", "id", "x", "y", "floor", "next_to"],
                    registry.beacons.values.filter { inVenue($0.venue) }.sorted { $0.key < $1.key }.map { b in
                        [b.key, b.venue ?? "", b.name ?? "", b.identity ?? "", number(b.x), number(b.y), int(b.floor), b.nextTo.sorted().joined(separator: ",")]
                    })
        case .nodes:
            return (["key", "venue", "beacon", "x", "y", "floor", "rssi_offset", "pinned"],
                    registry.nodes.values.filter { inVenue($0.venue) }.sorted { $0.key < $1.key }.map { n in
                        [n.key, n.venue ?? "", n.beacon ?? "", number(n.x), number(n.y), int(n.floor), number(n.rssiOffset), n.pinned ? "yes" : "no"]
                    })
        case .users:
            let devices = Dictionary(grouping: registry.devices.values, by: \.user).mapValues(\.count)
            return (["key", "name", "devices", "incognito_until"], registry.users.values.sorted { $0.key < $1.key }.map { u in
                [u.key, u.name ?? "", String(devices[u.key] ?? 0), u.incognitoUntil.map(Timestamps.iso8601) ?? ""]
            })
        case .devices:
            return (["id", "user", "name", "tx"], registry.devices.values.sorted { $0.identity < $1.identity }.map { d in
                [d.identity, d.user, d.name ?? "", int(d.tx)]
            })
        }
    }
}
