import Foundation
import PresenceCore
import PresenceMQTT
import Testing

extension EndToEndTests {
    /// `presence-scanner` with a capture instead of a radio, and without a radio at all.
    @Suite struct ScannerTests {
        static let fixture = PackagePaths.root.appendingPathComponent("Tests/Fixtures/scan.btsnoop").path

        /// A capture of `count` iBeacon adverts `spacing` ms apart, each its own minor.
        static func capture(count: Int, spacing: Int64) -> [UInt8] {
            var writer = BTSnoopWriter(datalink: .monitor)
            let start: Int64 = 1_763_774_734_000
            for index in 0 ..< count {
                let minor = UInt16(index)
                let data: [UInt8] = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15,
                                     0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
                                     0x00, 0x07, UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5]
                let report = AdvertisingReport(properties: AdvertisingEventProperties(legacyEventType: 3), legacyEventType: 3, addressTypeByte: 0,
                                               address: BluetoothAddress(rawValue: 0x001B_DC07_3100 + UInt64(index % 200)), rssi: -60, data: data[...])
                writer.appendEvent(HCIEventEncoder.advertisingReport([report]) ?? [], unixMicroseconds: (start + Int64(index) * spacing) * 1000)
            }
            return writer.bytes
        }

        /// The sightings in the batches published under `topics` for `node`, with their batches' seq.
        static func batches(_ bus: BusRecorder, _ topics: Topics, node: String) -> [(seq: Int64, sightings: [Sighting])] {
            bus.messages(on: topics.sightings(node: node)).compactMap { message in
                (try? SightingBatchDecoder.decode(message.payload, topicNode: node).get()).map { ($0.batch.seq, $0.batch.sightings) }
            }
        }

        @Test func aReplayedCapturePublishesExactlyTheExpectedSightingsInOrder() async throws {
            let h = try PipelineHarness("capture")
            let bus = try await h.recorder()
            let scanner = try ChildProcess.spawn(try PackagePaths.executable("presence-scanner"),
                                                 ["--node", "fixture", "--btsnoop", Self.fixture, "--speed", "max", "--keep-time"], environment: h.environment)
            #expect(await scanner.wait(timeout: .seconds(30)) == 0, "scanner: \(scanner.stderr.suffix(1500))")
            try await bus.wait(5, for: "the offline status") { messages in
                messages.last { $0.topic == h.topics.nodeStatus(node: "fixture") }?.text.contains("offline") == true
            }
            let batches = Self.batches(bus, h.topics, node: "fixture")
            #expect(batches.map(\.seq) == Array(1 ... Int64(max(1, batches.count))))
            let published = batches.flatMap(\.sightings)
            let expectedFile = PackagePaths.root.appendingPathComponent("Tests/Fixtures/scan.expected.json")
            let expected = try SightingBatchDecoder.decode(Array(Data(contentsOf: expectedFile)), topicNode: "fixture").get().batch.sightings
            #expect(published.map(\.id) == expected.map(\.id))
            #expect(published.map(\.rssi) == expected.map(\.rssi))
            #expect(published.map(\.tx) == expected.map(\.tx))
            #expect(published.map(\.ts) == expected.map(\.ts), "--keep-time keeps the capture's clock")
            let statuses = bus.objects(on: h.topics.nodeStatus(node: "fixture"))
            #expect(statuses.first?["state"] as? String == "online" && statuses.first?["adapter"] as? String == "btsnoop:scan.btsnoop")
            #expect(statuses.first?["version"] is String && statuses.first?["started"] is Int)
            let stats = bus.objects(on: h.topics.nodeStats(node: "fixture")).last
            #expect(stats?["sightings"] as? Int == expected.count)
            await bus.stop()
        }

        @Test func stoppingTheBrokerForThirtySecondsDuringAReplayLosesNoSighting() async throws {
            let broker = try PrivateBroker.start()
            defer { broker.remove() }
            let captureFile = FileManager.default.temporaryDirectory.appendingPathComponent("outage-\(UUID().uuidString).btsnoop")
            try Data(Self.capture(count: 500, spacing: 100)).write(to: captureFile)
            defer { try? FileManager.default.removeItem(at: captureFile) }
            let topics = try Topics(prefix: "outage")
            let bus = try BusRecorder(url: broker.url, filter: "outage/#")
            try await bus.start()
            let scanner = try ChildProcess.spawn(try PackagePaths.executable("presence-scanner"),
                                                 ["--node", "walker", "--btsnoop", captureFile.path, "--topic-prefix", "outage", "--broker", broker.url])
            try await bus.wait(15, for: "the first batches") { $0.contains { $0.topic == topics.sightings(node: "walker") } }
            try await Task.sleep(for: .seconds(3))
            try broker.stop()
            try await Task.sleep(for: .seconds(30))
            #expect(scanner.poll() == nil, "the scanner must wait for the broker, not give up")
            try broker.restart()
            #expect(await scanner.wait(timeout: .seconds(90)) == 0, "scanner: \(scanner.stderr.suffix(1500))")
            try await Task.sleep(for: .seconds(1))
            let heard = Set(Self.batches(bus, topics, node: "walker").flatMap(\.sightings).map(\.id))
            let missing = (0 ..< 500).filter { !heard.contains("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:\($0)") }
            #expect(missing.isEmpty, "\(missing.count) sightings lost, first \(missing.prefix(5))")
            #expect(scanner.stderr.contains("capture replayed"))
            await bus.stop()
        }

        @Test func batchesSpooledOnDiskAreSentByTheNextRun() async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spool-\(UUID().uuidString)")
            let spool = folder.appendingPathComponent("spool")
            try FileManager.default.createDirectory(at: spool, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let capture = folder.appendingPathComponent("capture.btsnoop")
            try Data(Self.capture(count: 40, spacing: 10)).write(to: capture)
            let nowhere = "mqtt://127.0.0.1:\(try freePort())"
            // First run: no broker; the batches wait on disk when the scanner is stopped.
            let first = try ChildProcess.spawn(try PackagePaths.executable("presence-scanner"),
                                               ["--node", "spooler", "--btsnoop", capture.path, "--speed", "max", "--topic-prefix", "spool",
                                                "--broker", nowhere, "--spool-dir", spool.path])
            try await Task.sleep(for: .seconds(3))
            first.send(SIGTERM)
            #expect(await first.wait(timeout: .seconds(20)) != nil)
            let spooled = try String(contentsOf: spool.appendingPathComponent("spooler.spool"), encoding: .utf8)
            #expect(!spooled.isEmpty, "nothing was spooled on disk")
            // Second run, with a broker: the spooled batches go first, then the new capture's.
            let broker = try PrivateBroker.start()
            defer { broker.remove() }
            let topics = try Topics(prefix: "spool")
            let bus = try BusRecorder(url: broker.url, filter: "spool/#")
            try await bus.start()
            let second = try ChildProcess.spawn(try PackagePaths.executable("presence-scanner"),
                                                ["--node", "spooler", "--btsnoop", Self.fixture, "--speed", "max", "--topic-prefix", "spool",
                                                 "--broker", broker.url, "--spool-dir", spool.path])
            #expect(await second.wait(timeout: .seconds(30)) == 0, "\(second.stderr.suffix(1500))")
            try await Task.sleep(for: .milliseconds(500))
            let ids = Self.batches(bus, topics, node: "spooler").flatMap(\.sightings).map(\.id)
            let old = (0 ..< 40).map { "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:\($0)" }
            #expect(Set(old).isSubset(of: Set(ids)), "lost \(Set(old).subtracting(ids).count) spooled sightings")
            #expect(ids.firstIndex(of: old[0]) ?? .max < ids.firstIndex { $0.hasPrefix("altbeacon:") } ?? -1, "spooled batches go first")
            #expect((try? String(contentsOf: spool.appendingPathComponent("spooler.spool"), encoding: .utf8))?.isEmpty == true)
            await bus.stop()
        }

        @Test func withoutBluetoothTheScannerSaysWhyInOneLine() async throws {
            let h = try PipelineHarness("nohci")
            let scanner = try ChildProcess.spawn(try PackagePaths.executable("presence-scanner"), ["--node", "n1", "--hci", "hci0"], environment: h.environment)
            let status = await scanner.wait()
            #expect(status != 0)
            let lines = scanner.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(scanner.stderr)")
            // Here the kernel has no AF_BLUETOOTH; elsewhere there may be no adapter, or no capability.
            #expect(["no Bluetooth support", "no Bluetooth adapter", "CAP_NET_RAW"].contains { scanner.stderr.contains($0) }, "\(scanner.stderr)")
        }

        @Test func goodAdvertiseFlagsGetAsFarAsTheAdapter() async throws {
            // Accepted flags (a negative power among them) fail only where the radio is needed.
            let h = try PipelineHarness("advertise")
            let scanner = try ChildProcess.spawn(try PackagePaths.executable("presence-scanner"),
                                                 ["--node", "n1", "--hci", "hci0", "--advertise", "--advertise-tx", "-70", "--advertise-interval", "500ms"],
                                                 environment: h.environment)
            #expect(await scanner.wait() != 0)
            #expect(scanner.stderr.split(separator: "\n").count == 1, "\(scanner.stderr)")
            #expect(["no Bluetooth support", "no Bluetooth adapter", "CAP_NET_RAW"].contains { scanner.stderr.contains($0) }, "\(scanner.stderr)")
        }

        @Test(arguments: [
            (["--node", "n1"], "--hci"),
            (["--node", "n1", "--btsnoop", "/nonexistent.btsnoop"], "/nonexistent.btsnoop"),
            (["--node", "n1", "--btsnoop", "x", "--simulate", "y"], "one source"),
            (["--node", "N1", "--hci", "hci0"], "N1"),
            (["--node", "n1", "--hci", "hci0", "--window", "200"], "200"),
            (["--node", "n1", "--btsnoop", "x", "--speed", "fast"], "fast"),
            (["--node", "n1", "--hci", "hci0", "--min-rssi", "-300"], "-300"),
            (["--node", "n1", "--hci", "hci0", "--hash-addresses"], "secret"),
            (["--node", "n1", "--hci", "hci0", "--addresses", "some"], "some"),
            // --advertise: only where a radio can transmit, with a power and an interval in range.
            (["--node", "n1", "--hci", "hci0", "--monitor", "--advertise"], "--advertise cannot be used with --monitor"),
            (["--node", "n1", "--btsnoop", "/nonexistent.btsnoop", "--advertise"], "--advertise needs --hci"),
            (["--simulate", "/nonexistent.json", "--advertise"], "--advertise needs --hci"),
            (["--node", "n1", "--hci", "hci0", "--advertise-tx", "-59"], "need --advertise"),
            (["--node", "n1", "--hci", "hci0", "--advertise-interval", "2s"], "need --advertise"),
            (["--node", "n1", "--hci", "hci0", "--advertise", "--advertise-tx", "21"], "--advertise-tx 21 "),
            (["--node", "n1", "--hci", "hci0", "--advertise", "--advertise-tx", "-128"], "--advertise-tx -128 "),
            (["--node", "n1", "--hci", "hci0", "--advertise", "--advertise-tx", "0"], "--advertise-tx 0 "),
            (["--node", "n1", "--hci", "hci0", "--advertise", "--advertise-tx", "loud"], "loud"),
            (["--node", "n1", "--hci", "hci0", "--advertise", "--advertise-interval", "50ms"], "--advertise-interval 50ms"),
            (["--node", "n1", "--hci", "hci0", "--advertise", "--advertise-interval", "11s"], "--advertise-interval 11s"),
            (["--node", "n1", "--hci", "hci0", "--advertise", "--advertise-interval", "often"], "--advertise-interval 'often'"),
        ])
        func badFlagsAreRefusedInOneLine(_ arguments: [String], _ named: String) async throws {
            let h = try PipelineHarness("scannerflags")
            let scanner = try ChildProcess.spawn(try PackagePaths.executable("presence-scanner"), arguments,
                                                 environment: h.environment.merging(["PRESENCE_HASH_SECRET": ""]) { $1 })
            #expect(await scanner.wait() != 0)
            #expect(scanner.stderr.split(separator: "\n").count == 1 && scanner.stderr.contains(named), "\(scanner.stderr)")
        }
    }
}
