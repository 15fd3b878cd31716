import Foundation
import Testing

/// `presencectl export`, `import` and `list` against real databases: a venue goes out and comes
/// back the same; a bad file is refused in one line naming the value, and writes nothing.
@Suite struct VenueFileTests {
    static let uuid = PresencectlTests.uuid

    static func file(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("venue-\(UUID().uuidString)-\(name).yaml").path
    }

    static func venue(_ label: String) async throws -> PipelineHarness {
        let h = try await PresencectlTests.seeded(label)
        try await h.ctlOKAsync("venue", "add", "hall", "--name", "Main hall")
        try await h.ctlOKAsync("zone", "add", "floor-1", "--venue", "hall", "--name", "First floor")
        try await h.ctlOKAsync("zone", "add", "east-wing", "--venue", "hall", "--parent", "floor-1")
        try await h.ctlOKAsync("beacon", "add", "door", "--venue", "hall", "--zone", "east-wing", "--name", "Door: east", "--x", "1.5", "--y", "-2", "--floor", "1",
                    "--switch-margin", "8", "--switch-dwell", "5s", "--absence-timeout", "2m", "--radius", "3", "--tx", "-62",
                    "--hello", "Welcome, {name}!")
        try await h.ctlOKAsync("beacon", "add", "stage", "--venue", "hall", "--x", "10", "--y", "0", "--floor", "1", "--next-to", "door")
        try await h.ctlOKAsync("node", "add", "scan-2", "--venue", "hall", "--beacon", "stage", "--x", "10", "--y", "0", "--floor", "1", "--rssi-offset", "-3.5")
        try await h.ctlOKAsync("user", "add", "bob", "--name", "Bob O'Neil")
        try await h.ctlOKAsync("device", "add", "ibeacon:\(uuid):9:10", "--user", "bob", "--name", "badge", "--tx", "-60")
        return h
    }

    @Test func aVenueExportedAndImportedComesBackTheSame() async throws {
        let source = try await Self.venue("export")
        let exported = Self.file("all")
        try await source.ctlOKAsync("export", "--users", "--out", exported)
        let mode = try FileManager.default.attributesOfItem(atPath: exported)[.posixPermissions] as? Int
        #expect(mode == 0o600, "a file with users is readable by its owner only")

        let target = try PipelineHarness("import")
        try await target.ctlOKAsync("migrate")
        let dry = try await target.ctlOKAsync("import", exported, "--dry-run")
        #expect(dry.contains("2 venues, 2 zones, 3 beacons, 2 nodes, 2 users, 2 devices"))
        #expect(try target.rows("SELECT count(*) FROM presence.beacons") == ["0"])
        let imported = try await target.ctlOKAsync("import", exported)
        #expect(imported.contains("imported 2 venues, 2 zones, 3 beacons, 2 nodes, 2 users, 2 devices"))
        let again = Self.file("again")
        try await target.ctlOKAsync("export", "--users", "--out", again)
        #expect(try String(contentsOfFile: again, encoding: .utf8) == String(contentsOfFile: exported, encoding: .utf8))
        #expect(try target.rows("SELECT pinned, rssi_offset FROM presence.nodes WHERE key = 'scan-2'") == ["t|-3.5"])
        #expect(try target.rows("SELECT beacon_key, neighbour_key FROM presence.beacon_neighbours") == ["door|stage"])
        #expect(try target.rows("SELECT key, parent_key, name FROM presence.zones ORDER BY 1") == ["east-wing|floor-1|", "floor-1||First floor"])
        #expect(try target.rows("SELECT zone_key FROM presence.beacons WHERE key = 'door'") == ["east-wing"])
        let zones = try await target.ctlOKAsync("list", "zones", "--csv")
        #expect(zones == "key,venue,name,parent,beacons,region\r\neast-wing,hall,,floor-1,door,false\r\nfloor-1,hall,First floor,,door,false\r\n", "\(zones)")

        let beacons = try await target.ctlOKAsync("list", "beacons", "--venue", "hall")
        #expect(beacons.contains("door") && beacons.contains("stage") && !beacons.contains("desk-1"))
        let devices = try await target.ctlOKAsync("list", "devices", "--json")
        #expect(devices.split(separator: "\n").count == 2 && devices.contains(#""user":"bob""#))
        let nodes = try await target.ctlOKAsync("list", "nodes", "--csv")
        #expect(nodes == "key,venue,beacon,x,y,floor,rssi_offset,pinned\r\nscan-1,lab,desk-1,,,,0,false\r\nscan-2,hall,stage,10,0,1,-3.5,true\r\n")
    }

    @Test func withoutUsersTheExportHoldsNoPersonalData() async throws {
        let h = try await Self.venue("export-plain")
        let text = try await h.ctlOKAsync("export", "--venue", "hall")
        #expect(text.contains("door") && !text.contains("desk-1"), "only the venue asked for")
        #expect(!text.contains("users:") && !text.contains("bob") && !text.contains(":9:10"))
    }

    /// Bad files, each with what its one-line error must name.
    static let badFiles: [(String, String)] = [
        ("beacons:\n  - key: b1\n    tx: 99\n", "beacons[0].tx 99"),
        ("beacons:\n  - key: b1\n  - key: B 2\n", "beacons[1] key 'B 2'"),
        ("nodes:\n  - key: n1\n    rssi_offset: 80\n", "nodes[0].rssi_offset 80"),
        ("beacons:\n  - key: b1\n    switch_dwell: soon\n", "beacons[0].switch_dwell"),
        ("users:\n  - key: u1\n    devices:\n      - id: ibeacon:1234:1:1\n", "users[0].devices[0].id"),
        ("beacons:\n  - key: b1\n    x: [1, 2]\n", "beacons[0].x"),
        ("beacons:\n  - name: nameless\n", "'key' is missing"),
        ("version: 2\n", "version 2"),
        ("zones:\n  - key: z1\n    parent: z1\n", "zones[0].parent 'z1'"),
        ("zones:\n  - key: z1\n    parent: nowhere\n", "zone 'nowhere' does not exist"),
        ("beacons:\n  - key: b1\n    zone: Not A Key\n", "beacons[0].zone"),
        ("venues: [unclosed\n", "not valid YAML"),
    ]

    @Test(arguments: badFiles)
    func aBadFileIsRefusedInOneLineAndWritesNothing(_ text: String, _ named: String) async throws {
        let h = try await PresencectlTests.seeded("import-bad")
        let before = try PresencectlTests.dump(h)
        let path = Self.file("bad")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await h.ctlAsync(["import", path])
        #expect(result.status != 0)
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(named), "\(result.stderr)")
        #expect(try PresencectlTests.dump(h) == before)
    }

    @Test func aFileNamingWhatDoesNotExistWritesNothingAtAll() async throws {
        let h = try await PresencectlTests.seeded("import-missing")
        let before = try PresencectlTests.dump(h)
        let path = Self.file("missing")
        try "venues:\n  - key: annex\nbeacons:\n  - key: b9\n    venue: annex\nnodes:\n  - key: n9\n    beacon: nowhere\n".write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await h.ctlAsync(["import", path])
        #expect(result.status != 0 && result.stderr.contains("nowhere"), "\(result.stderr)")
        #expect(try PresencectlTests.dump(h) == before, "the venue and beacon before the bad node were rolled back")
    }
}
