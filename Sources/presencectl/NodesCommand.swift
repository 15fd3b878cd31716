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
    @Flag(help: "One JSON object per line.") var json = false

    func run() async throws {
        let rows = try await withDatabase(connection) { db in
            try await db.query("""
                SELECT n.key, n.venue_key, n.beacon_key, n.x, n.y, n.floor, n.rssi_offset, n.pinned,
                       c.offset_db, c.links, c.residual_db, c.readings, c.fitted_at
                FROM presence.nodes n LEFT JOIN presence.node_calibration c ON c.node_key = n.key
                ORDER BY n.key
                """).rows
        }
        let nodes = try rows.map(Self.node)
        if json {
            for node in nodes { print(node.json) }
        } else {
            print(TableOutput.render(header: ["NODE", "VENUE", "BEACON", "X", "Y", "FLOOR", "OFFSET", "SOURCE", "FITTED", "LINKS", "RESIDUAL", "FITTED AT"],
                                     rows: nodes.map(\.cells)))
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

        var json: String {
            var w = JSONWriter()
            w.object { w in
                w.member("node", registered.key)
                w.member("venue", registered.venue)
                w.member("beacon", registered.beacon)
                w.member("x", number: registered.x)
                w.member("y", number: registered.y)
                w.member("floor", registered.floor)
                w.member("offset_db", number: applied.offset)
                w.member("source", applied.source.rawValue)
                w.member("fitted_offset_db", number: fitted)
                w.member("links", links)
                w.member("residual_db", number: residual)
                w.member("readings", readings)
                w.member("fitted_at", fittedAt)
            }
            return String(decoding: w.bytes, as: UTF8.self)
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
             fittedAt: try row.milliseconds(12))
    }
}
