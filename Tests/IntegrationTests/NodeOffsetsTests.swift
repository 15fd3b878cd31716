import Foundation
import PresenceCore
import PresencePostgres
import PresenceStore
import Synchronization
import Testing

/// Node offsets that persist: the pinned column, the self-calibration's stored offsets, and the
/// commands that show and pin them, against a real database.
@Suite struct NodeOffsetsTests {
    static let fittedAt: Int64 = 1_767_261_600_000

    static func summary(_ applied: [String: Double]) -> SelfCalibration.Summary {
        SelfCalibration.Summary(readings: 1_200, fittedAt: fittedAt,
                                fit: NodeLinkCalibration.Fit(offsets: applied, exponent: 2.1, links: 12, residual: 0.75), applied: applied)
    }

    static func connect(_ h: PipelineHarness) async throws -> PostgresConnection {
        try await PostgresConnection.connect(PostgresConfiguration(url: h.databaseURL), logger: PostgresTestSupport.quietLogger)
    }

    @Test func theMigrationPinsNodesThatHadAnOffsetAndRunsOnce() async throws {
        let (database, _) = try await PostgresTestSupport.connect("pin-migrate")
        let logger = PostgresTestSupport.quietLogger
        _ = try await database.migrate(Migration.all.filter { $0.version < 9 }, logger: logger)
        try await database.query("INSERT INTO presence.nodes (key, rssi_offset) VALUES ('hot', -3), ('plain', 0)")
        #expect(try await database.migrate(logger: logger) == Migration.all.map(\.version).filter { $0 >= 9 })
        #expect(try await database.migrate(logger: logger) == [])
        let rows = try await database.query("SELECT key, pinned FROM presence.nodes ORDER BY key").rows
        #expect(try rows.map { "\($0.string(0) ?? "") \(try $0.bool(1) ?? false)" } == ["hot true", "plain false"])
        await database.close()
    }

    @Test func storedOffsetsShowInNodesAndNotifyNoRegistryChange() async throws {
        let h = try await PresencectlTests.seeded("node-store")
        try await h.ctlOKAsync("node", "add", "scan-2", "--venue", "lab", "--x", "6", "--y", "0")
        try await h.ctlOKAsync("node", "add", "scan-3", "--rssi-offset", "-4")
        let database = try await Self.connect(h)
        var listenerConfiguration = PostgresConfiguration(url: h.databaseURL)
        listenerConfiguration.applicationName = "registry-listener"
        let listener = PostgresListener(configuration: listenerConfiguration, channels: ["presence_registry"], logger: PostgresTestSupport.quietLogger)
        defer { listener.stop() }
        let events = EventCollector.collecting(listener)
        listener.start()
        try await eventually(10, "the listener to listen") { events.all.contains(.listening) }

        try await database.query("INSERT INTO presence.node_calibration (node_key, offset_db, fitted_at) VALUES ('scan-3', 1, now())")
        try await database.storeNodeCalibration(Self.summary(["scan-1": 1.5, "scan-2": -1.25, "gone": 3]))
        // A registry change afterwards: its notification must be the first one.
        try await database.query("UPDATE presence.venues SET name = 'Lab' WHERE key = 'lab'")
        try await eventually(10, "the venue's notification") { !events.notifications.isEmpty }
        try await Task.sleep(for: .milliseconds(300))
        #expect(events.notifications == [.notification(channel: "presence_registry", payload: "venues")], "storing offsets is no registry change")

        let nodes = try await h.ctlOKAsync("nodes", "--json").split(separator: "\n").map(String.init)
        #expect(nodes.prefix(2) == [
            #"{"node":"scan-1","venue":"lab","beacon":"desk-1","offset_db":1.5,"source":"fitted","fitted_offset_db":1.5,"links":12,"residual_db":0.75,"readings":1200,"fitted_at":1767261600000}"#,
            #"{"node":"scan-2","venue":"lab","x":6,"y":0,"offset_db":-1.25,"source":"fitted","fitted_offset_db":-1.25,"links":12,"residual_db":0.75,"readings":1200,"fitted_at":1767261600000}"#,
        ])
        let third = nodes.last ?? ""
        #expect(nodes.count == 3 && third.hasPrefix(#"{"node":"scan-3","offset_db":-4,"source":"pinned","fitted_offset_db":1,"#), "\(third)")
        let table = try await h.ctlOKAsync("nodes")
        #expect(table.contains("SOURCE") && table.contains("fitted") && table.contains("pinned"), "\(table)")

        // The next fit applies scan-1 alone: scan-2's row goes, the pinned scan-3's stays.
        try await database.storeNodeCalibration(Self.summary(["scan-1": 0.5]))
        #expect(try await database.storedNodeOffsets() == ["scan-1": 0.5, "scan-3": 1])
        await database.close()
    }

    @Test func eachNodeStoresTheLinksAndResidualOfItsOwnGroup() async throws {
        let h = try await PresencectlTests.seeded("node-groups")
        try await h.ctlOKAsync("node", "add", "scan-2", "--venue", "lab", "--x", "6", "--y", "0")
        let applied = ["scan-1": 1.5, "scan-2": -1.25]
        let fit = NodeLinkCalibration.Fit(offsets: applied, exponent: 2.1, links: 30, residual: 0.9, groups: [
            NodeLinkCalibration.Group(area: "lab", nodes: ["other", "scan-1"], exponent: 2.3, links: 20, residual: 0.5),
        ])
        let database = try await Self.connect(h)
        try await database.storeNodeCalibration(SelfCalibration.Summary(readings: 900, fittedAt: Self.fittedAt, fit: fit, applied: applied))
        await database.close()
        let rows = try h.rows("SELECT node_key, links, residual_db FROM presence.node_calibration ORDER BY node_key")
        #expect(rows == ["scan-1|20|0.5", "scan-2|30|0.9"], "scan-1 from its group, scan-2 (in none) from the whole fit")
    }

    @Test func pinAndUnpinRoundTrip() async throws {
        let h = try await PresencectlTests.seeded("pin")
        let pinned = "SELECT rssi_offset, pinned FROM presence.nodes WHERE key = 'scan-1'"
        let refused = try await h.ctlAsync("node", "pin", "scan-1")
        #expect(refused.status != 0 && refused.stderr.split(separator: "\n").count == 1 && refused.stderr.contains("scan-1"), "\(refused.stderr)")

        let database = try await Self.connect(h)
        try await database.storeNodeCalibration(Self.summary(["scan-1": 1.75]))
        await database.close()
        #expect(try await h.ctlOKAsync("node", "pin", "scan-1") == "node scan-1 pinned at 1.75 dB\n")
        #expect(try h.rows(pinned) == ["1.75|t"])
        #expect(try await h.ctlOKAsync("nodes", "--json").contains(#""offset_db":1.75,"source":"pinned","fitted_offset_db":1.75"#))

        try await h.ctlOKAsync("node", "unpin", "scan-1")
        #expect(try h.rows(pinned) == ["0|f"])
        #expect(try await h.ctlOKAsync("nodes", "--json").contains(#""offset_db":1.75,"source":"fitted""#), "the fit takes over")

        try await h.ctlOKAsync("node", "pin", "scan-1", "--rssi-offset", "0")
        #expect(try h.rows(pinned) == ["0|t"])
        #expect(try await h.ctlOKAsync("nodes", "--json").contains(#""offset_db":0,"source":"pinned""#), "pinned at 0")
        try await h.ctlOKAsync("node", "add", "scan-1", "--x", "1", "--y", "1")
        #expect(try h.rows(pinned) == ["0|t"], "an update without an offset keeps the pin")

        try await h.ctlOKAsync("node", "add", "scan-2", "--venue", "lab")
        #expect(try await h.ctlOKAsync("nodes", "--json").contains(#"{"node":"scan-2","venue":"lab","offset_db":0,"source":"none"}"#))
        for (arguments, named) in [(["node", "pin", "nowhere"], "nowhere"), (["node", "unpin", "nowhere"], "nowhere"),
                                   (["node", "pin", "scan-1", "--rssi-offset", "60"], "60")] {
            let result = try await h.ctlAsync(arguments)
            #expect(result.status != 0 && result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(named), "\(result.stderr)")
        }
        #expect(try h.rows(pinned) == ["0|t"])
    }
}

/// Collects a listener's events for expectations.
final class EventCollector: Sendable {
    private let events = Mutex<[PostgresListenerEvent]>([])

    /// A collector of `listener`'s events from now on.
    static func collecting(_ listener: PostgresListener) -> EventCollector {
        let collector = EventCollector()
        Task { [stream = listener.events] in
            for await event in stream { collector.events.withLock { $0.append(event) } }
        }
        return collector
    }

    var all: [PostgresListenerEvent] { events.withLock { $0 } }

    var notifications: [PostgresListenerEvent] {
        all.filter { if case .notification = $0 { true } else { false } }
    }
}
