import Foundation
import PresenceTestSupport
import Testing

/// `presencectl visits --chart` over a simulated hour in a real database: the bars drawn are the
/// counts `presence.visits_30m_v` (and, with `--present`, `presence.occupancy_30m_v`) give.
@Suite struct VisitsChartTests {
    /// `count` visits by users walking between four beacons from 09:50 to about 11:05, from a
    /// seeded generator: some cross a bucket's end, some return to a beacon within one bucket.
    static func simulatedHour(_ h: PipelineHarness) throws {
        var random = SplitMix(seed: 11)
        var values: [String] = []
        for user in 0 ..< 14 {
            var time = FixtureDay.at("09:50") + Int64(random.next() % 900) * 1000
            var beacon = Int(random.next() % 4)
            while time < FixtureDay.at("11:00") {
                let dwell = Int64(20 + random.next() % 1400) * 1000
                let stamp = { (ms: Int64) in "'\(Date(timeIntervalSince1970: Double(ms) / 1000).formatted(.iso8601))'" }
                values.append("('user-\(user)', 'booth-\(beacon)', \(stamp(time)), \(stamp(time + dwell)))")
                time += dwell + (random.next() % 2 == 0 ? 0 : Int64(random.next() % 300) * 1000)
                beacon = random.next() % 3 == 0 ? beacon : Int(random.next() % 4)
            }
        }
        // Explicit cases: one visit across 10:30, one user twice at booth-0 within 10:30–11:00.
        values += ["('walker', 'booth-1', '2026-01-05T10:20:00Z', '2026-01-05T10:40:00Z')",
                   "('walker', 'booth-0', '2026-01-05T10:41:00Z', '2026-01-05T10:43:00Z')",
                   "('walker', 'booth-0', '2026-01-05T10:50:00Z', '2026-01-05T10:52:00Z')"]
        _ = try h.rows("""
            INSERT INTO presence.sessions (user_key, beacon_key, venue_key, device, entered_at, last_seen_at, exited_at, exit_reason, enter_event)
            SELECT u, b, 'hall', 'mac:c4:7c:8d:6a:2b:01', e::timestamptz, x::timestamptz, x::timestamptz, 'timeout', gen_random_uuid()
            FROM (VALUES \(values.joined(separator: ", "))) AS f (u, b, e, x)
            """)
    }

    static let iso = #"to_char(bucket_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#

    @Test func theVisitsChartShowsTheCountsSQLGives() async throws {
        let h = try PipelineHarness("chart")
        try await h.ctlOKAsync("migrate")
        try Self.simulatedHour(h)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chart-\(h.prefix)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let svgPath = folder.appendingPathComponent("visits.svg").path
        let quiet = try await h.ctlOKAsync("visits", "--chart", svgPath)
        #expect(quiet.isEmpty, "with --chart, rows only with --json or --csv")
        let svg = try String(contentsOfFile: svgPath, encoding: .utf8)
        let expected = try h.rows("SELECT beacon_key, \(Self.iso), unique_users FROM presence.visits_30m_v ORDER BY 1, 2")
        #expect(expected.count >= 12, "four beacons over three buckets or more")
        #expect(ChartBars.bars(in: svg).map { $0.split(separator: "|").prefix(3).joined(separator: "|") } == expected)

        let presentPath = folder.appendingPathComponent("present.svg").path
        try await h.ctlOKAsync("visits", "--present", "--chart", presentPath)
        let present = try h.rows("SELECT beacon_key, \(Self.iso), unique_users FROM presence.occupancy_30m_v ORDER BY 1, 2")
        #expect(ChartBars.bars(in: try String(contentsOfFile: presentPath, encoding: .utf8)).map { $0.split(separator: "|").prefix(3).joined(separator: "|") } == present)
        #expect(present != expected, "a visit across 10:30 counts in both buckets when present")

        let hourly = try await h.ctlOKAsync("visits", "--bucket", "1h", "--chart", folder.appendingPathComponent("hourly.svg").path, "--json")
        let hours = Set(expected.map { row in row.split(separator: "|").prefix(2).map { $0.prefix(13) }.joined(separator: "|") })
        #expect(FixtureDay.lines(hourly).count == hours.count, "one row per beacon and hour")

        #expect(try await h.ctlOKAsync("visits", "--venue", "annex", "--json").isEmpty, "no visit in that venue")
        #expect(FixtureDay.lines(try await h.ctlOKAsync("visits", "--venue", "hall", "--json")).count == expected.count)

        let pngPath = folder.appendingPathComponent("visits.png").path
        try await h.ctlOKAsync("visits", "--chart", pngPath)
        let png = try Data(contentsOf: URL(fileURLWithPath: pngPath))
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "a PNG file")

        let missing = folder.appendingPathComponent("missing.png").path
        let child = try ChildProcess.spawn(try PackagePaths.executable("presencectl"), ["visits", "--chart", missing],
                                           environment: h.environment.merging(["PATH": folder.path]) { $1 })
        #expect(await child.wait() != 0)
        #expect(child.stderr.split(separator: "\n").count == 1 && child.stderr.contains("rsvg-convert") && child.stderr.contains("librsvg2-bin"), "\(child.stderr)")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }
}

/// A small seeded generator (SplitMix64), so a test's random data is the same on every run.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
