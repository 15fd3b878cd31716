import ArgumentParser
import PresenceCLI
import PresenceCore
import PresenceDatabaseCLI
import PresencePostgres

struct NodesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nodes",
        abstract: "Every node: where it stands, the RSSI offset applied to it and where that comes from.",
        discussion: """
            The source is pinned (set by hand), fitted (as the self-calibration of `presence-aggregator --self-calibrate` \
            last stored it; applied while an aggregator runs with that flag) or none. The fitted offset is shown with what \
            its fit rests on: node-to-node links, the fit's RMS residual and when it was made.
            """)
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let rows = try await withDatabase(connection) { db in
            try await db.query("""
                SELECT n.key, n.venue_key, n.beacon_key, n.x, n.y, n.floor, n.rssi_offset, n.pinned,
                       c.offset_db, c.links, c.residual_db, c.readings, (EXTRACT(EPOCH FROM c.fitted_at) * 1000)::bigint
                FROM presence.nodes n LEFT JOIN presence.node_calibration c ON c.node_key = n.key
                ORDER BY n.key
                """).rows
        }
        let nodes = try rows.map(Self.node)
        var fields = FieldRows(Node.names)
        for node in nodes { fields.append(node.values) }
        try fields.print(output.format) {
            TableOutput.render(header: ["NODE", "VENUE", "BEACON", "X", "Y", "FLOOR", "OFFSET", "SOURCE", "FITTED", "LINKS", "RESIDUAL", "FITTED AT"],
                               rows: nodes.map(\.cells))
        }
    }

    /// One node as the query returns it.
    struct Node {
        var registered: Registry.Node
        var fitted: Double?
        var links: Int?
        var residual: Double?
        var readings: Int?
        var fittedAt: Int64?

        var applied: (offset: Double, source: OffsetSource) { OffsetSource.applied(to: registered, fitted: fitted) }

        static let names = ["node", "venue", "beacon", "x", "y", "floor", "offset_db", "source", "fitted_offset_db", "links", "residual_db",
                            "readings", "fitted_at"]

        /// The fields of `names`, in order, for JSON and CSV.
        var values: [FieldRows.Value?] {
            let number = { (value: Double?) in value.map(FieldRows.Value.number) }
            let integer = { (value: Int?) in value.map { FieldRows.Value.integer(Int64($0)) } }
            return [.text(registered.key), registered.venue.map(FieldRows.Value.text), registered.beacon.map(FieldRows.Value.text),
                    number(registered.x), number(registered.y), integer(registered.floor), .number(applied.offset),
                    .text(applied.source.rawValue), number(fitted), integer(links), number(residual), integer(readings),
                    fittedAt.map(FieldRows.Value.time)]
        }

        var cells: [String] {
            let number = { (value: Double?) in value.map(CalibrateCommand.decibels) ?? "-" }
            return [registered.key, registered.venue ?? "-", registered.beacon ?? "-", number(registered.x), number(registered.y),
                    registered.floor.map(String.init) ?? "-", number(applied.offset), applied.source.rawValue, number(fitted),
                    links.map(String.init) ?? "-", number(residual), fittedAt.map(Timestamps.iso8601) ?? "-"]
        }
    }

    static func node(_ row: PostgresRow) throws -> Node {
        Node(registered: Registry.Node(key: row.string(0) ?? "", venue: row.string(1), beacon: row.string(2), x: try row.double(3),
                                       y: try row.double(4), floor: try row.int(5), rssiOffset: try row.double(6) ?? 0,
                                       pinned: try row.bool(7) ?? false),
             fitted: try row.double(8), links: try row.int(9), residual: try row.double(10), readings: try row.int(11),
             fittedAt: try row.int(12).map(Int64.init))
    }
}
