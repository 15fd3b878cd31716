import ArgumentParser
import PresenceCLI
import PresenceCore
import PresenceDatabaseCLI
import PresenceStore

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List one kind of the registry: venues, zones, beacons, nodes, users or devices.")

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case venues, zones, beacons, nodes, users, devices
    }

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "venues, zones, beacons, nodes, users or devices.") var kind: Kind
    @Option(help: "Only this venue's zones, beacons and nodes.") var venue: String?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let venue = try venue.map { try Slug($0, what: "venue").value }
        let registry = try await withDatabase(connection) { try await $0.loadRegistry() }
        let fields = Self.fields(kind, registry, venue: venue)
        try fields.print(output.format) {
            TableOutput.render(header: fields.names.map { $0.uppercased() }, rows: fields.rows.map { row in
                row.map { value in value.map { FieldRows.csvText($0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "-" }
            })
        }
    }

    /// The kind's fields, one row per thing sorted by key; nil where a value is not set.
    static func fields(_ kind: Kind, _ registry: Registry, venue: String?) -> FieldRows {
        let inVenue = { (key: String?) in venue == nil || key == venue }
        let text = { (value: String?) in value.map(FieldRows.Value.text) }
        let number = { (value: Double?) in value.map(FieldRows.Value.number) }
        let integer = { (value: Int?) in value.map { FieldRows.Value.integer(Int64($0)) } }
        switch kind {
        case .venues:
            var fields = FieldRows(["key", "name"])
            for v in registry.venues.values.filter({ inVenue($0.key) }).sorted(by: { $0.key < $1.key }) { fields.append([.text(v.key), text(v.name)]) }
            return fields
        case .zones:
            // Those iBeacon regions stand for included: a zone's beacons are those inside it at any depth.
            let map = ZoneMap(registry: registry)
            var fields = FieldRows(["key", "venue", "name", "parent", "beacons", "region"])
            for z in map.zones.values.filter({ inVenue($0.venue) }).sorted(by: { $0.key < $1.key }) {
                let beacons = map.beacons[z.key] ?? []
                fields.append([.text(z.key), text(z.venue), text(z.name), text(z.parent), beacons.isEmpty ? nil : .text(beacons.joined(separator: ",")),
                               .flag(registry.zones[z.key] == nil)])
            }
            return fields
        case .beacons:
            var fields = FieldRows(["key", "venue", "name", "id", "x", "y", "floor", "next_to", "zone"])
            for b in registry.beacons.values.filter({ inVenue($0.venue) }).sorted(by: { $0.key < $1.key }) {
                fields.append([.text(b.key), text(b.venue), text(b.name), text(b.identity), number(b.x), number(b.y), integer(b.floor),
                               b.nextTo.isEmpty ? nil : .text(b.nextTo.sorted().joined(separator: ",")), text(b.zone)])
            }
            return fields
        case .nodes:
            var fields = FieldRows(["key", "venue", "beacon", "x", "y", "floor", "rssi_offset", "pinned"])
            for n in registry.nodes.values.filter({ inVenue($0.venue) }).sorted(by: { $0.key < $1.key }) {
                fields.append([.text(n.key), text(n.venue), text(n.beacon), number(n.x), number(n.y), integer(n.floor), .number(n.rssiOffset), .flag(n.pinned)])
            }
            return fields
        case .users:
            let devices = Dictionary(grouping: registry.devices.values, by: \.user).mapValues(\.count)
            var fields = FieldRows(["key", "name", "devices", "incognito_until"])
            for u in registry.users.values.sorted(by: { $0.key < $1.key }) {
                fields.append([.text(u.key), text(u.name), .integer(Int64(devices[u.key] ?? 0)), u.incognitoUntil.map(FieldRows.Value.time)])
            }
            return fields
        case .devices:
            var fields = FieldRows(["id", "user", "name", "tx"])
            for d in registry.devices.values.sorted(by: { $0.identity < $1.identity }) {
                fields.append([.text(d.identity), .text(d.user), text(d.name), integer(d.tx)])
            }
            return fields
        }
    }
}
