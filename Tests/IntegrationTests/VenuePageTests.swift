import Foundation
import PresenceCore
import PresenceMQTT
import Testing

extension EndToEndTests {
    /// The live venue page in headless Chromium (driven over the DevTools protocol by
    /// scripts/page-probe.py) while alice walks from booth a to booth b and leaves: who is where,
    /// the plan's occupancy, the visits chart and the event feed change as the events say.
    /// The screenshot goes to $PRESENCE_PAGE_SCREENSHOT (docs/venue-page.png for the README) or
    /// to a temporary file.
    @Suite struct VenuePageTests {
        /// JavaScript: "user@beacon" of everyone the page lists, and each booth's drawn count.
        static let people = #"[...document.querySelectorAll('#people li')].map(l => l.dataset.user + '@' + l.dataset.beacon).join(',')"#
        static func count(_ booth: String) -> String {
            #"(document.querySelector('#plans [data-beacon="\#(booth)"] .count') || {}).textContent"#
        }

        /// JavaScript: the count the plan's region of `zone` shows, and the zones list's.
        static func zoneCounts(_ zone: String) -> String {
            #"[(document.querySelector('#plans [data-zone="\#(zone)"] .zone-count') || {}).textContent, (document.querySelector('#zones [data-zone="\#(zone)"] .zone-count') || {}).textContent].join('/')"#
        }

        @Test func thePageFollowsAWalkAsTheEventsSay() async throws {
            let h = try PipelineHarness("page")
            try AggregatorWalkTests.register(h)
            try h.ctlOK("beacon", "add", "booth-a", "--name", "Booth A")
            try h.ctlOK("beacon", "add", "booth-c", "--name", "Booth C")
            try h.ctlOK("zone", "add", "hall", "--venue", "expo", "--name", "Hall")
            for booth in ["booth-a", "booth-b"] { try h.ctlOK("beacon", "add", booth, "--zone", "hall") }
            try h.ctlOK("user", "add", "bob", "--name", "Bob")
            try h.ctlOK("device", "add", "ibeacon:\(AggregatorWalkTests.uuid):7:2", "--user", "bob")
            let port = try freePort()
            let bus = try await h.recorder()
            let aggregator = try h.startAggregator(["--http", "127.0.0.1:\(port)"])
            defer { aggregator.send(SIGKILL) }
            try await waitForHTTP("http://127.0.0.1:\(port)/readyz", within: 60)

            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("page-\(h.prefix)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let screenshot = ProcessInfo.processInfo.environment["PRESENCE_PAGE_SCREENSHOT"] ?? folder.appendingPathComponent("venue-page.png").path
            let steps: [[String: Any]] = [
                ["name": "live", "until": "document.getElementById('link').textContent === 'live'", "timeout": 60],
                ["name": "nobody", "eval": "document.getElementById('nobody').hidden === false && \(Self.people) === ''"],
                ["name": "at a", "until": "\(Self.people) === 'alice@booth-a' && \(Self.count("booth-a")) === '1' && \(Self.zoneCounts("hall")) === '1/1'", "timeout": 60],
                ["name": "at b", "until": "\(Self.people) === 'alice@booth-b,bob@booth-b' && \(Self.count("booth-a")) === '0' && \(Self.count("booth-b")) === '2' && \(Self.zoneCounts("hall")) === '2/2'", "timeout": 60],
                ["name": "distance", "timeout": 10, "until": "[...document.querySelectorAll('#people li')].every(l => / \\(\\d+\\.\\d m\\) /.test(l.textContent))"],
                ["name": "chart", "until": #"[...document.querySelectorAll('#visits svg[data-beacon="booth-b"] rect.bar')].reduce((n, bar) => n + Number(bar.dataset.count), 0) === 2"#, "timeout": 90],
                ["name": "screenshot", "screenshot": screenshot],
                ["name": "gone", "until": "\(Self.people) === '' && document.getElementById('nobody').hidden === false && \(Self.count("booth-b")) === '0' && \(Self.zoneCounts("hall")) === '0/0'", "timeout": 60],
                ["name": "feed", "eval": "[...document.querySelectorAll('#feed li')].map(l => l.textContent)"],
                ["name": "summary", "eval": "document.getElementById('people-count').textContent"],
            ]
            let stepsFile = folder.appendingPathComponent("steps.json")
            try JSONSerialization.data(withJSONObject: steps).write(to: stepsFile)
            let probe = try ChildProcess.spawn("/usr/bin/env", ["python3", PackagePaths.root.appendingPathComponent("scripts/page-probe.py").path,
                                                              "http://127.0.0.1:\(port)/", stepsFile.path])

            // Alice at booth a for 8 s, then both at booth b for 10 s, then silence.
            let publisher = try await h.publisher()
            var seq: [String: Int64] = [:]
            try await eventually(90, "the page's stream to open") { probe.stdout.contains(#""name": "nobody", "ok": true"#) || probe.poll() != nil }
            let t0 = nowMilliseconds()
            while nowMilliseconds() - t0 < 30_000, probe.poll() == nil {
                let elapsed = nowMilliseconds() - t0
                if elapsed > 26_000 { break }
                let near = elapsed < 12_000 ? "a" : "b"
                for booth in ["a", "b", "c"] {
                    let node = "node-\(booth)"
                    let ts = nowMilliseconds()
                    seq[node, default: 0] += 1
                    var sightings = [Sighting(ts: ts, id: AggregatorWalkTests.tag, rssi: booth == near ? -55 : -82, tx: -59)]
                    if elapsed >= 12_000 { sightings.append(Sighting(ts: ts, id: "ibeacon:\(AggregatorWalkTests.uuid):7:2", rssi: booth == "b" ? -56 : -83, tx: -59)) }
                    try await publisher.publish(SightingBatch(node: node, seq: seq[node] ?? 0, sent: ts, sightings: sightings), topics: h.topics)
                }
                try await Task.sleep(for: .milliseconds(500))
            }
            let status = await probe.wait(timeout: .seconds(120))
            await publisher.stop()
            let lines = probe.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(status == 0, "the page probe failed: \(probe.stdout) \(probe.stderr.suffix(2_000))")
            let passed = lines.filter { $0["ok"] as? Bool == true }.compactMap { $0["name"] as? String }
            #expect(passed == steps.compactMap { $0["name"] as? String })

            // The feed shows, newest first, exactly the events published on the bus.
            let published = bus.objects(on: "\(h.prefix)/v1/events/").map { event -> String in
                let who = event["user"] as? String == "alice" ? "Alice" : "Bob"
                let booth = "Booth \((event["beacon"] as? String ?? "").suffix(1).uppercased())"
                return event["event"] as? String == "enter" ? "enter \(who) entered \(booth)" : "exit \(who) left \(booth)"
            }
            let feed = (lines.first { $0["name"] as? String == "feed" }?["value"] as? [String] ?? []).reversed().map { line in
                String(line.drop { $0 != " " }.dropFirst())
            }
            #expect(published.count == 6, "\(published)")
            #expect(feed.count == published.count)
            for (shown, event) in zip(feed, published) {
                #expect(shown.hasPrefix(event), "feed line '\(shown)' for event '\(event)'")
            }
            #expect(lines.first { $0["name"] as? String == "summary" }?["value"] as? String == "0 people")
            #expect(FileManager.default.fileExists(atPath: screenshot))
        }
    }
}
